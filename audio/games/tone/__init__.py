"""audio/games/tone"""
