"""audio/games/skate/speech"""
