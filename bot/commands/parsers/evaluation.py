"""The parsers of `reviewer eval` and of `reviewer eval import`, which is parsed on its own
(bot/commands/cli.py `main`) since `reviewer eval` takes a corpus where a subcommand would go."""

from __future__ import annotations

import argparse

from bot.commands.parsers import Formatter, Parser, command


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is less than 1")
    return value


EVAL_EPILOG = """exit codes: 0 done (and the gate passed); 1 the gate failed (--min-recall, --baseline), or the
corpus, a case's config or an admin file is invalid; 2 usage error, unreadable file, or no case could be run.
`reviewer eval import aacr-bench FILE --repos DIR --out CORPUS` makes a corpus of a public benchmark
(`reviewer eval import aacr-bench --help`). See docs/eval.md."""

EVAL_IMPORT_EPILOG = """profiles: strict keeps only the comments a person wrote at Diff level (a pull request left
with none is skipped); full keeps every comment; smoke keeps every comment of a handful of pull
requests, per language the one with the fewest changed lines among those whose repository and
commits are there.
exit codes: 0 the corpus is written; 1 FILE (or --negatives) is not in the benchmark's format;
2 usage error, unreadable file, or no case could be made. See docs/eval.md "A public benchmark"."""


def evaluation(sub) -> None:
    e = command(sub, "eval", "review a corpus of known defects and report recall, precision, noise and cost",
                epilog=EVAL_EPILOG)
    e.add_argument("corpus", metavar="CORPUS", help="the corpus: a directory holding corpus.yaml, or the file")
    e.add_argument("--admin-config", required=True, metavar="FILE",
                   help="the admin file whose providers, defaults and judge the reviews use (required)")
    e.add_argument("--compare", metavar="FILE",
                   help="a second admin file run on the same cases: each figure's difference, with a 95 percent "
                        "interval (default: none)")
    e.add_argument("--only", nargs="+", action="extend", metavar="ID",
                   help="run only these cases (default: every case)")
    e.add_argument("--jobs", type=_positive, default=1, metavar="N", help="cases reviewed at once (default: 1)")
    e.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                   help="a table for people, the JSON report, or Markdown for a pull request comment "
                        "(default: text)")
    e.add_argument("--min-recall", type=_share, metavar="X",
                   help="exit 1 when the overall recall is below X, between 0 and 1 (default: no minimum)")
    e.add_argument("--baseline", metavar="REPORT.json",
                   help="a saved JSON report: exit 1 when recall, precision or quiet dropped beyond its 95 percent "
                        "interval (default: none)")


def build_eval_import_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="reviewer eval import", formatter_class=Formatter,
                    description="write a public benchmark's pull requests as a `reviewer eval` corpus")
    sub = parser.add_subparsers(dest="benchmark", required=True, parser_class=Parser, metavar="BENCHMARK",
                                title="benchmarks")
    a = command(sub, "aacr-bench", "AACR-Bench (github.com/alibaba/aacr-bench): 196 pull requests, 50 "
                                   "repositories, 10 languages", epilog=EVAL_IMPORT_EPILOG)
    a.add_argument("file", metavar="FILE", help="the benchmark's dataset/positive_samples.json (or a file of "
                                                "the same format)")
    a.add_argument("--repos", required=True, metavar="DIR",
                   help="where the repositories are: each a clone at DIR/<owner>/<name> (.git optional) (required)")
    a.add_argument("--out", required=True, metavar="CORPUS",
                   help="the corpus directory to write CORPUS/corpus.yaml into (required)")
    a.add_argument("--profile", choices=("strict", "full", "smoke"), default="full",
                   help="which comments and pull requests to keep, as below (default: full)")
    a.add_argument("--negatives", metavar="FILE",
                   help="the benchmark's dataset/negative_samples.json: the lines of comments its annotators "
                        "rejected become must-not places, where they overlap no kept comment (default: none)")
    return parser
