"""Tests of attnlib.transformer (chapter 9): self-attention, masks, heads, positions, the tiny model."""
