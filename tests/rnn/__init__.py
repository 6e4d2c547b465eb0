"""Tests of attnlib.rnn (a package, so that test module names cannot clash with other test folders)."""
