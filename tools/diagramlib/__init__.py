"""The course's architecture diagrams, drawn by tools/diagrams.py: a canvas and one module per part."""
