"""Starlancer file formats: BIGF .hog archives, .DTE missions, .ut speech."""
