"""Tests of the attnlib core (a package, so that test module names cannot clash with other test folders)."""
