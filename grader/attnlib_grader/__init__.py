"""The teacher's grader of the course's exercise sets (not part of attnlib, which learners install).

    pip install -e . -e ./grader          # from the course repository; bubblewrap from the system
    python tools/grade.py exercises/dist/03_dot_product_attention/autograder.zip SUBMISSIONS/ --out results/

``grade`` grades a folder of notebooks, ``sandbox`` runs one learner's code and calls its functions from the
grader, ``isolation`` builds the bubblewrap sandbox of each submission. See exercises/teachers.md.
"""
