"""Rounds of a builder stream with snapshot functions, in executor tasks.

A round streams its rows out as it pulls, then records how many items it pulled and the
processor's snapshot after them; a replay restores the snapshot the round started from and pulls
the same number again. The round's item limit is exact: rows a last fill brings past it are the
round's *carry*, kept in its record and delivered first by the next round. A round leaves its
processor in this worker's :data:`~jetconnect._builders._processor.LIVE` cache, so a next round
that lands here goes on without restoring anything.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator

import pyarrow as pa

from jetconnect._arrow_conform import DEFAULT_BATCH_ROWS
from jetconnect._builders._processor import LIVE, Items, LiveProcessor, Processor, destroy_quietly
from jetconnect._builders._round_reader import RoundPlan, RoundReader
from jetconnect._round_log import Round, RoundFacts, new_attempt_id
from jetconnect.errors import OffsetError, SourceError

#: How long a replay waits for a source that has stopped giving the items it gave before.
REPLAY_PATIENCE_S = 30.0


class Gathered:
    """What one pull of a snapshot round brought: rows delivered, rows carried past the limit, why it ended."""

    def __init__(self, schema: pa.Schema) -> None:
        self.carry: pa.Table = schema.empty_table()
        self.emitted = 0
        self.pulled = 0
        self.ended = "dry"


class SnapshotRounds(RoundReader):
    """Rounds of a stream with snapshot functions: rows stream out, the record keeps a count and a snapshot."""

    def carry_of(self, facts: RoundFacts | None) -> pa.Table | None:
        """The carry a recorded round left for the next one (read from its record only if it has one)."""
        if facts is None or not facts.carried:
            return None
        record = self.rounds.read(self.index, facts.round)
        if record is None:
            raise OffsetError(f"{self.where}: the record of round {facts.round} vanished from {self.rounds}")
        return record.carry

    def resume(self, round_: int, previous: RoundFacts | None) -> tuple[Processor, pa.Table | None, bool]:
        """A processor where ``previous`` left off, its carry, and whether it came live from this worker."""
        live = LIVE.take(self.key)
        if live is not None and live.round == round_ - 1 and (previous is None or live.attempt == previous.attempt):
            return live.processor, live.carry, True
        if live is not None:  # left by a round another attempt recorded, or by an older round
            destroy_quietly(live.processor)
        return Processor(self.spec, self.index, self.total, self.options), self.carry_of(previous), False

    def keep(self, processor: Processor, round_: int, attempt: str, carry: pa.Table | None) -> None:
        """Leave ``processor`` in this worker for the next round."""
        LIVE.put(self.key, LiveProcessor(processor, round_, attempt, carry), self.keep_alive_s)

    def gather(
        self, processor: Processor, carry: pa.Table | None, limit: int | None, out: Gathered
    ) -> Iterator[pa.RecordBatch]:
        """Deliver ``carry``, then pull until ``limit`` rows, a fill that adds nothing, or the time is up.

        Rows are yielded as they are converted; ``out`` says what was pulled, delivered and carried.
        """
        if carry is not None and carry.num_rows:
            take = carry.num_rows if limit is None else min(limit, carry.num_rows)
            yield from carry.slice(0, take).to_batches()
            out.emitted = take
            if take < carry.num_rows:
                out.carry, out.ended = carry.slice(take), "limit"
                return
        items = Items(self.spec)
        started = time.monotonic()
        while True:
            if limit is not None and out.emitted + len(items) >= limit:
                out.ended = "limit"
                break
            if time.monotonic() - started >= self.max_pull_s:
                out.ended = "time"
                break
            buf = processor.fill()
            if not buf.items:
                break
            out.pulled += len(buf.items)
            items.extend(buf)
            if len(items) >= DEFAULT_BATCH_ROWS and (limit is None or out.emitted + len(items) <= limit):
                batch = items.take_batch()
                out.emitted += batch.num_rows
                yield batch
        if len(items):
            batch = items.take_batch()
            room = batch.num_rows if limit is None else min(batch.num_rows, limit - out.emitted)
            if room:
                out.emitted += room
                yield batch.slice(0, room)
            if room < batch.num_rows:
                out.carry = pa.Table.from_batches([batch.slice(room)])

    def _start(self, plan: RoundPlan, record: Round | None) -> tuple[Processor, pa.Table | None, object]:
        """A processor at the start of ``plan.round``, its carry, and the start snapshot to record (round 1).

        ``record`` is the round's own record when it is replayed.
        """
        previous = self.previous(plan)
        processor, carry, live = self.resume(plan.round, previous)
        start_snapshot = None
        try:
            if previous is not None:
                if not live:
                    processor.restore(previous.snapshot)
            elif record is not None:
                if record.facts.start_snapshot is not None:
                    processor.restore(record.facts.start_snapshot)
            elif not live:
                start_snapshot = processor.snapshot()
        except BaseException:
            destroy_quietly(processor)
            raise
        return processor, carry, start_snapshot

    def pull(self, plan: RoundPlan) -> Iterator[pa.RecordBatch]:
        processor, carry, start_snapshot = self._start(plan, None)
        round_ = plan.round
        attempt = new_attempt_id()
        out = Gathered(self.arrow_schema)
        try:
            yield from self.gather(processor, carry, plan.limit, out)
            facts = RoundFacts(
                out.emitted,
                out.pulled,
                out.ended,
                attempt,
                carried=out.carry.num_rows,
                round=round_,
                snapshot=processor.snapshot(),
                start_snapshot=start_snapshot,
                total=self.total,
            )
            winner = self.rounds.write(self.index, round_, Round(facts, out.carry))
            if winner.facts.attempt != attempt and not winner.facts.same_contents(facts):
                raise SourceError(
                    f"{self.where}: another attempt recorded round {round_} first, with other contents "
                    f"({winner.facts} against {facts}); this attempt's rows are discarded and a retry replays "
                    f"the record (is speculation on?)"
                )
            processor.acknowledge()
        except BaseException:
            destroy_quietly(processor)
            raise
        self.keep(processor, round_, winner.facts.attempt, winner.carry)

    def replay(self, plan: RoundPlan, record: Round) -> Iterator[pa.RecordBatch]:
        processor, carry, _ = self._start(plan, record)
        round_, facts = plan.round, record.facts
        try:
            from_carry = 0
            if carry is not None and carry.num_rows:
                from_carry = min(carry.num_rows, facts.emitted)
                yield from carry.slice(0, from_carry).to_batches()
            exact = yield from self._pull_exactly(processor, facts.pulled, facts.emitted - from_carry, round_)
        except BaseException:
            destroy_quietly(processor)
            raise
        if exact:
            self.keep(processor, round_, facts.attempt, record.carry)
        else:  # a fill went past the round's items: the state is beyond the round's end
            destroy_quietly(processor)

    def _pull_exactly(
        self, processor: Processor, count: int, deliver: int, round_: int
    ) -> Generator[pa.RecordBatch, None, bool]:
        """Pull ``count`` items, deliver the first ``deliver``; True if no fill went past ``count``."""
        items = Items(self.spec)
        got = delivered = 0
        quiet_since = time.monotonic()
        while got < count:
            buf = processor.fill()
            if buf.items:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > REPLAY_PATIENCE_S:
                raise SourceError(
                    f"{self.where}: replaying round {round_} gave {got} of the {count} items it gave before: "
                    f"restore_snapshot_fn must make the source deterministic"
                )
            else:
                time.sleep(0.001)
            items.extend(buf)
            got += len(buf.items)
            if len(items) >= DEFAULT_BATCH_ROWS and got < count:
                batch = items.take_batch()
                room = min(batch.num_rows, deliver - delivered)
                if room:
                    yield batch.slice(0, room)
                    delivered += room
        if len(items):
            items.truncate(len(items) - (got - count))
            batch = items.take_batch()
            room = min(batch.num_rows, deliver - delivered)
            if room:
                yield batch.slice(0, room)
        return got == count


__all__ = ["REPLAY_PATIENCE_S", "Gathered", "SnapshotRounds"]
