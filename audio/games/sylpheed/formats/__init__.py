"""audio/games/sylpheed/formats"""
