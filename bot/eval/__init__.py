"""`reviewer eval`'s pure part: the corpus, matching findings to known defects, the figures, the
paired bootstrap, the release gate and the report's renderings.

Nothing here does I/O: `bot.commands.eval` reads the corpus and the repositories, runs each case
through the engine, and hands the outcomes here to be scored and rendered.
"""
