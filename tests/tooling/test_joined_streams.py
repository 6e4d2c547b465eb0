"""Stored outputs depend on what a cell printed, not on when the kernel flushed it (exercises/07 rebuilt
differently from one run to the next: one print cut into two stream outputs)."""

import nbformat
from notebooks import joined_streams


def stream(name, text):
    return nbformat.v4.new_output("stream", name=name, text=text)


def cell_with(*outputs):
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("print('a'); print('b')", outputs=list(outputs), id="cell"))
    return nb


def test_consecutive_outputs_of_one_stream_become_one():
    nb = joined_streams(cell_with(stream("stdout", "a\n"), stream("stdout", "b\n"), stream("stdout", "c\n")))
    assert nb.cells[0].outputs == [stream("stdout", "a\nb\nc\n")]


def test_a_split_and_an_unsplit_run_store_the_same_file():
    split = joined_streams(cell_with(stream("stdout", "a\n"), stream("stdout", "b\n")))
    whole = joined_streams(cell_with(stream("stdout", "a\nb\n")))
    assert nbformat.writes(split) == nbformat.writes(whole)


def test_other_streams_and_outputs_between_them_keep_their_order():
    image = nbformat.v4.new_output("display_data", data={"text/plain": "fig"})
    outputs = [stream("stdout", "a\n"), stream("stderr", "w\n"), stream("stdout", "b\n"), image]
    outputs.append(stream("stdout", "c\n"))
    nb = joined_streams(cell_with(*outputs))
    assert nb.cells[0].outputs == outputs  # nothing is joined across another stream or output


def test_markdown_cells_are_left_alone():
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell("text", id="md"))
    assert joined_streams(nb).cells[0] == nbformat.v4.new_markdown_cell("text", id="md")
