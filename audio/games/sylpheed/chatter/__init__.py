"""audio/games/sylpheed/chatter"""
