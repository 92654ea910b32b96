"""The librarian's stages: plain typed functions and small classes, one module each."""
