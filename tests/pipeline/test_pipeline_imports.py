"""The pipeline's steps import one another without a cycle: what several share (the services, in
bot/pipeline/services.py) is a module of its own, not a type one step borrows from another."""

from __future__ import annotations

import grimp


def test_no_module_of_the_pipeline_imports_one_that_imports_it_back():
    graph = grimp.build_graph("bot")  # imports under TYPE_CHECKING and in functions count too
    steps = sorted(m for m in graph.modules if m.startswith("bot.pipeline."))
    cycles = [(a, b) for a in steps for b in sorted(graph.find_modules_directly_imported_by(a))
              if b.startswith("bot.pipeline.") and graph.chain_exists(importer=b, imported=a)]
    assert cycles == []
