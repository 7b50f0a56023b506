"""audio/live"""
