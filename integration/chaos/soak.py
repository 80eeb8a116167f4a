"""The chaos soak: every exactly-once source × sink pair, SIGKILLed over and over, then counted.

    python integration/chaos/soak.py [--pairs core-snapshot,kafka-kafka,...] [--kills 20] [--seed N]

For each pair (integration/chaos/workloads.py): add a chunk of input, start the pair's crash-test
pipeline (integration/pipelines/*.py) from its checkpoint, wait for its first progress in this
run (a new offsets/ or commits/ entry), wait a random, seeded delay and SIGKILL its whole process
group (driver, JVM, Python workers); again, until ``--kills`` kills have landed on a running
pipeline. In one of those runs (chosen by the seed) the pair's server is restarted mid-stream
first. Then a last run drains everything and the output is counted: rows expected, lost,
duplicated. Exit status 1 if any pair lost or duplicated a row or could not finish.

Not part of CI: scripts/chaos.sh runs it.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workloads import (  # noqa: E402
    Count,
    Pair,
    make_pairs,
    progress_mark,
    server_running,
    server_script,
)

from jetconnect.testing import PipelineProcess, start_pipeline  # noqa: E402

START_TIMEOUT = 300.0  # s: a Spark start plus a first micro-batch on a loaded 2-core machine
FINAL_TIMEOUT = 900.0


@dataclass
class Row:
    pair: str
    kills: int = 0
    restarts: int = 0
    count: Count | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    failed: bool = False
    has_server: bool = False

    @property
    def ok(self) -> bool:
        return not self.failed and self.count is not None and self.count.lost == 0 and self.count.duplicated == 0


def say(pair: str, message: str) -> None:
    print(f"{datetime.now():%H:%M:%S} [{pair}] {message}", flush=True)


def wait_for(predicate, timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def soak_pair(key: str, pair: Pair, kills: int, rng: random.Random, spare_first_batch: bool = False) -> Row:
    row = Row(pair.name)
    began = time.monotonic()
    restart_in = rng.randrange(kills) if pair.server and kills else None
    restart_pending = restart_in is not None
    run: PipelineProcess | None = None
    dead_in_a_row = 0  # runs that died by themselves, one after the other
    pair.rng = rng
    try:
        pair.setup()
        cycle = 0
        while row.kills < kills and cycle < 2 * kills + 2:
            pair.add_input(cycle)
            script, args, env = pair.command(final=False)
            mark = progress_mark(pair.checkpoint)
            run = start_pipeline(script, args, pair.work / f"run{cycle:02d}.log", env)
            started = time.monotonic()
            if cycle == 0 and spare_first_batch:  # the first kill comes after batch 0 is committed
                progressed = lambda: progress_mark(pair.checkpoint)[1] > 0  # noqa: E731
            else:
                progressed = lambda: progress_mark(pair.checkpoint) != mark  # noqa: E731
            if not wait_for(lambda: progressed() or not run.running(), START_TIMEOUT):
                row.notes.append(f"run {cycle}: no progress within {START_TIMEOUT:.0f} s")
                say(key, row.notes[-1])
            elif not run.running():
                code = run.proc.wait()
                row.notes.append(f"run {cycle}: exited {code} before the kill point")
                say(key, row.notes[-1] + ("" if code == 0 else f"; log tail:\n{run.tail(2000)}"))
            else:
                say(
                    key,
                    f"run {cycle}: progress {time.monotonic() - started:.1f} s after start, checkpoint {progress_mark(pair.checkpoint)}",
                )
                if restart_pending and cycle >= (restart_in or 0):
                    delay = rng.uniform(0, pair.window)
                    say(key, f"run {cycle}: restarting the {pair.server} in {delay:.2f} s")
                    time.sleep(delay)
                    if run.running():
                        t = time.monotonic()
                        pair.restart_server()
                        row.restarts += 1
                        restart_pending = False
                        say(
                            key,
                            f"run {cycle}: {pair.server} restarted ({time.monotonic() - t:.1f} s), checkpoint {progress_mark(pair.checkpoint)}",
                        )
                        commits = progress_mark(pair.checkpoint)[1]
                        if not wait_for(lambda: progress_mark(pair.checkpoint)[1] > commits or not run.running(), 240):
                            row.notes.append(f"run {cycle}: no commit within 240 s of the {pair.server} restart")
                            say(key, row.notes[-1])
                delay = rng.uniform(0, pair.window)
                time.sleep(delay)
                if run.running():
                    offsets, commits = progress_mark(pair.checkpoint)
                    run.kill()
                    row.kills += 1
                    where = "inside a batch" if offsets > commits else "between batches"
                    say(
                        key,
                        f"kill {row.kills}: run {cycle}, {delay:.2f} s after its progress, {where} (offsets {offsets}, commits {commits})",
                    )
                    pair.after_kill()
                else:
                    code = run.proc.wait()
                    row.notes.append(f"run {cycle}: exited {code} within the {delay:.2f} s delay, before the kill")
                    say(key, row.notes[-1] + ("" if code == 0 else f"; log tail:\n{run.tail(2000)}"))
            run.kill()
            if run.proc.returncode not in (0, -9):
                row.failed = True  # a run that died by itself: a server restart it did not survive, or worse
                row.notes.append(f"run {cycle} failed: {error_line(run)}")
                dead_in_a_row += 1
                if dead_in_a_row >= 2:
                    raise RuntimeError(
                        f"two runs in a row died without being killed: the query cannot restart "
                        f"from its checkpoint {pair.checkpoint} (logs in {pair.work})"
                    )
            else:
                dead_in_a_row = 0
            cycle += 1
        if row.kills < kills:
            row.notes.append(f"only {row.kills} of {kills} kills landed on a running pipeline in {cycle} runs")
        if restart_pending:
            row.notes.append(f"the {pair.server} was never restarted while the pipeline ran")

        # the last run: drain and count
        script, args, env = pair.command(final=True)
        run = start_pipeline(script, args, pair.work / "final.log", env)
        say(key, "final run started")
        if pair.final_exits:
            run.wait(timeout=FINAL_TIMEOUT)
        else:
            pair.before_final(run)
            if not wait_for(lambda: (time.sleep(1.0), pair.complete())[1] or not run.running(), FINAL_TIMEOUT):
                raise AssertionError(f"the final run did not deliver everything in {FINAL_TIMEOUT:.0f} s")
            if not run.running():
                raise AssertionError(f"the final run exited {run.proc.wait()}; log:\n{run.tail()}")
            commits = progress_mark(pair.checkpoint)[1]  # a duplicate would come in the next batches
            wait_for(lambda: progress_mark(pair.checkpoint)[1] >= commits + 2, 30)
            run.kill()
        say(key, "final run done; counting")
        row.count = pair.count()
    except Exception as error:  # the row says why; the soak goes on with the next pair
        row.failed = True
        row.notes.append(f"{type(error).__name__}: {str(error)[-3000:]}")
        say(key, f"FAILED:\n{traceback.format_exc()[-4000:]}")
        if run is not None:
            run.kill()
        try:
            row.count = pair.count()
        except Exception as count_error:
            row.notes.append(f"could not count: {count_error}")
    finally:
        try:
            pair.cleanup()
        except Exception as error:
            say(key, f"cleanup: {error}")
    if row.count is not None:
        row.notes += row.count.details
    row.seconds = time.monotonic() - began
    return row


def error_line(run: PipelineProcess) -> str:
    """The last line of a failed run's log that names an exception (jetconnect's or Spark's)."""
    lines = [line.strip() for line in run.tail(20000).splitlines()]
    for line in reversed(lines):
        if "Error:" in line or "Exception:" in line:
            return line[:600]
    return lines[-1][:600] if lines else "(empty log)"


def table(rows: list[Row]) -> str:
    header = ["pair", "kills", "server restarts", "rows", "lost", "duplicated", "seconds"]
    lines = [header]
    for r in rows:
        c = r.count
        lines.append(
            [
                r.pair + ("" if not r.failed else " (FAILED)"),
                str(r.kills),
                str(r.restarts) if r.has_server else "n/a",
                str(c.rows) if c else "-",
                str(c.lost) if c else "-",
                str(c.duplicated) if c else "-",
                f"{r.seconds:.0f}",
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["| " + " | ".join(cell.ljust(w) for cell, w in zip(line, widths)) + " |" for line in lines]
    out.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def main() -> int:
    pairs = make_pairs()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", default=",".join(pairs), help=f"comma list of: {', '.join(pairs)} (default: all)")
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs of the driver per pair (default 20)")
    parser.add_argument(
        "--seed", type=int, default=None, help="seed of the kill moments (default: from the clock, printed)"
    )
    parser.add_argument("--work", default="/tmp/jetconnect-chaos", help="where checkpoints, outputs and logs go")
    parser.add_argument(
        "--spare-first-batch",
        action="store_true",
        help="let the first run commit its batch 0 before it is killed (leaves out the kills inside "
        "a query's first micro-batch, to measure the rest)",
    )
    parser.add_argument("--keep-servers", action="store_true", help="leave the servers this run started running")
    args = parser.parse_args()

    chosen = [p.strip() for p in args.pairs.split(",") if p.strip()]
    unknown = [p for p in chosen if p not in pairs]
    if unknown:
        parser.error(f"unknown pairs {unknown}; known: {', '.join(pairs)}")
    seed = args.seed if args.seed is not None else int(time.time()) % 1_000_000
    work = Path(args.work) / datetime.now().strftime("%Y%m%d-%H%M%S")
    print(f"chaos soak: pairs {','.join(chosen)}; kills {args.kills}; seed {seed}; work {work}", flush=True)

    started: list[str] = []
    rows: list[Row] = []
    try:
        for key in chosen:
            pair = pairs[key](work / key)
            pair.work.mkdir(parents=True, exist_ok=True)
            missing = None
            for name in pair.servers_needed:
                if name not in started and not server_running(name):
                    try:
                        server_script(name, "start", timeout=900)
                        started.append(name)
                    except Exception as error:
                        missing = f"server {name} cannot start: {error}"
            if missing:
                row = Row(pair.name, failed=True, notes=[missing])
            else:
                row = soak_pair(key, pair, args.kills, random.Random(f"{seed}:{key}"), args.spare_first_batch)
            row.has_server = pair.server is not None
            rows.append(row)
            say(key, f"{'ok' if row.ok else 'NOT OK'}: {row.count}; notes: {row.notes}")
    finally:
        if not args.keep_servers:
            for name in started:
                try:
                    server_script(name, "stop")
                except Exception as error:
                    print(f"stopping {name}: {error}", flush=True)

    print()
    spared = ", batch 0 spared" if args.spare_first_batch else ""
    print(f"chaos soak, seed {seed}, {args.kills} kills per pair{spared}, {datetime.now():%Y-%m-%d %H:%M}")
    print(table(rows))
    for r in rows:
        for note in r.notes:
            print(f"  {r.pair}: {note}")
    return 0 if rows and all(r.ok for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
