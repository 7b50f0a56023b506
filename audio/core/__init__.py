"""audio/core"""
