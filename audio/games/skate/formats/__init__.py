"""audio/games/skate/formats"""
