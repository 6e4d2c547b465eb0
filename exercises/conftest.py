"""pytest --nbval collects exercises/*.ipynb only: instructor masters and built bundles are not lessons."""

collect_ignore_glob = ["source/*", "dist/*"]
