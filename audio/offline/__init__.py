"""audio/offline"""
