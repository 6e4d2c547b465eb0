"""The exercise sets' build, one job a module (the command line is tools/exercises.py):

master.py      a set's master notebook read into questions, test cells, learner and solutions notebooks
learner.py     the learner notebook's own cells (setup, grading, withheld outputs)
references.py  the public tests' reference helpers recorded as tables under the pinned environment
outputs.py     what a build writes (learner notebook, public tests, bundles) and submissions for tests
"""
