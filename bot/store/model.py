"""The storage interface: the rows the server keeps, and one protocol per concern.

Every backend (bot.store.sqlite, bot.store.postgres) implements each protocol with the same
behaviour; tests/store/test_store_conformance.py runs one suite against both. The protocols are what the
server, the queue and the connector API see; nothing above this package names a backend's class.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

# What a delivery means and what its review came to: the classification (bot/events/jobs.py makes it from
# the payload) and the review's result (the pipeline returns it), kept with the delivery's row.
Kind = Literal["job", "installation", "ignored"]


@dataclass(frozen=True)
class Classification:
    kind: Kind
    action: str | None = None
    installation_id: int | None = None
    repo: str | None = None  # full name, owner/name
    pr_number: int | None = None
    head_sha: str | None = None
    reason: str = ""  # why it is ignored
    indexes: bool = False  # an installation event whose job builds or deletes repository indexes

    @property
    def key(self) -> str | None:
        """Work with the same key runs one at a time: the pull request, else the head commit (a
        job always has one: `classify` requires its repository and head). An installation's
        index work runs one job at a time per installation, so one repository at a time."""
        if self.indexes and self.installation_id is not None:
            return f"installation/{self.installation_id}"
        if self.repo and self.pr_number is not None:
            return f"{self.repo}#{self.pr_number}"
        if self.repo and self.head_sha:
            return f"{self.repo}@{self.head_sha}"
        return None


REVIEW_RESULTS = ("approved", "findings", "failed", "skipped")  # a ReviewResult's kinds


@dataclass(frozen=True)
class ReviewResult:
    """What one review came to, beside its job's state: `approved` (the app approved the head, or
    had already), `findings` (it completed, with or without findings, and did not approve),
    `failed` (the configuration is invalid, or no model gave a usable answer: a redelivery runs it
    again), `skipped` (nothing to review, or no model to review with). `reason` is a stable
    kebab-case code: why it was skipped or failed, or what the completed review repeated
    (`already-reviewed`); None otherwise. (The store's column is `review_outcome`, named before
    "outcome" came to mean only what became of a finding: bot/learnings/outcomes.py.)"""

    kind: Literal["approved", "findings", "failed", "skipped"]
    reason: str | None = None


# What the review memory keeps of a pull request (bot/store/reviews.py).
@dataclass(frozen=True)
class ReviewedHead:
    """The last head a model review completed for, with the plan it followed and what the check
    run said (so an event that changes nothing can complete its run the same way)."""

    head_sha: str
    plan_digest: str
    report: dict[str, Any]
    merge_base: str = ""


@dataclass(frozen=True)
class PostedFinding:
    """A finding posted on a pull request: its fingerprint and what stands behind it (the review
    memory's `review_findings` row; bot.reviews.fingerprints makes them)."""

    fingerprint: str
    path: str
    severity: str
    category: str
    code: str  # the normalised code the finding is about; "" when it was not in the diff
    message: str
    head_sha: str = ""  # the head it was posted at, where its lines are numbered
    source: str = "model"  # "model" | "analyzer:<tool>" (bot/reviews/ledger.py)
    rule: str | None = None  # an analyzer's rule id: an upload's finding of the same rule at its lines is not posted again
    start_line: int = 0  # its lines at `head_sha` (0: unknown, a row from before they were kept)
    end_line: int = 0


# The states of a delivery's row (see DeliveryStore); `OPEN` ones are never pruned.
OPEN_STATES = ("received", "queued", "running")
FINISHED_STATES = ("done", "ignored", "failed", "superseded")


class StoreError(Exception):
    """A store failed a statement (its driver's error is the cause: `raise ... from`), so that a
    caller above the store catches one type, whichever backend or driver it runs on."""


class StoreUnavailable(StoreError):
    """The store cannot be reached right now (a restart, a network cut); the caller may retry.

    The webhook answers 503 for it, so that GitHub marks the delivery failed, to be redelivered."""

    reason = "unreachable"


class StoreRefused(StoreError):
    """The database server answered and refused the connection: the database does not exist, the
    password is wrong, the role is unknown, its rules (pg_hba.conf) do not let this address in.
    Trying again will not help; the message says which, and what to change. `reason` is one of
    REFUSALS, for logs and `reviewer doctor`."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


REFUSALS = ("missing-database", "wrong-password", "unknown-role", "not-allowed", "refused")


class SchemaTooNew(Exception):
    """The database was migrated by a newer version of Reviewer than this one."""

    def __init__(self, found: int, known: int, where: str) -> None:
        super().__init__(
            f"the database {where} has schema version {found}, newer than this version of Reviewer "
            f"knows ({known}): upgrade Reviewer (a newer process migrated it), do not downgrade")
        self.found, self.known = found, known


class MigrationFailed(Exception):
    """The database refused a migration's statement (a missing privilege, an extension that is not
    installed): nothing of that migration is kept, and the process does not start on half a schema."""

    def __init__(self, version: int, statement: str, reason: str, hint: str = "") -> None:
        first = " ".join(statement.split())[:120]
        super().__init__(f"migration {version} failed at `{first}`: {reason}{hint}")
        self.version = version


class Conflict(Exception):
    """A connector object changed (or appeared, or went) since the `resourceVersion` the writer read."""

    def __init__(self) -> None:
        super().__init__("stale resourceVersion")


@dataclass(frozen=True)
class Incoming:
    """A delivery as the webhook received it, before anything is parsed."""

    delivery_id: str
    event: str
    headers: dict[str, str]
    body: bytes
    received_at: float
    traceparent: str | None = None  # the W3C trace context of the webhook's span (bot.telemetry), or None


@dataclass(frozen=True)
class Received:
    """A stored delivery not yet classified."""

    seq: int
    delivery_id: str
    event: str
    body: bytes


@dataclass(frozen=True)
class Queued:
    """A job waiting for a worker (what the scheduler needs; the payload is read at start)."""

    seq: int
    delivery_id: str
    event: str
    key: str
    head_sha: str | None


@dataclass(frozen=True)
class Started:
    """A job just marked running, with what its handler needs."""

    delivery_id: str
    event: str
    action: str | None
    body: bytes
    installation_id: int | None
    repo: str | None
    pr_number: int | None
    head_sha: str | None
    attempt: int
    traceparent: str | None = None  # the delivery's trace, which the job continues (bot.telemetry)
    queued_at: float | None = None  # when the dispatcher queued it: the job's wait is measured from it


# (delivery id, new state, classification or None, error or None): what the dispatcher made of one
# delivery, as its row records it. ("Outcome" is what became of a finding: bot/learnings/outcomes.py.)
Classified = tuple[str, str, Classification | None, str | None]


@dataclass(frozen=True)
class DeliveryDecision:
    """What the dispatcher made of a received delivery: its row's new state (`classified`), and the
    parsed payload of an installation event (recorded with it)."""

    event: str
    classified: Classified
    installation_payload: dict[str, Any] | None = None


def refused(decision: DeliveryDecision, exc: Exception) -> DeliveryDecision:
    """The decision a store records instead of one it could not write: the delivery failed, with
    the store's reason (its first line; a value that cannot be stored is the payload's fault)."""
    reason = (str(exc).splitlines() or [""])[0][:200]
    error = f"the delivery could not be recorded: {type(exc).__name__}: {reason}"
    return DeliveryDecision(decision.event, (decision.classified[0], "failed", None, error))


# Decides one received row; async so that a caller may yield to the event loop between bodies.
Decide = Callable[[Received], Awaitable[DeliveryDecision]]


class DeliveryStore(Protocol):
    """Deliveries keyed by `X-GitHub-Delivery`, whose `state` is their job's life:
    `received` → `queued` | `ignored` | `done` (installation events) | `failed` (not JSON);
    `queued` → `running` → `done` | `failed`; `queued` → `superseded`. A redelivery of a `failed`
    row puts it back to `received`; of any other row it is a duplicate and changes nothing.
    `recover` puts `running` rows (a crash interrupted them) back to `queued`. `redeliver` (the
    console's and the admin API's) puts a `failed` row back to `received` as a redelivery of it
    does, body kept; it is then dispatched as a new delivery is. `prune` removes a delivery's
    timeline rows with it.

    Beside the job's state, a `done` row keeps what its review came to (`review_outcome`:
    approved, findings, failed, skipped; `review_reason`), as `finish` is given it (None for a job
    that ran no review). A row whose review failed counts as failed wherever deliveries are
    counted or filtered (`recent(state="failed")`, `shown_states_since`; see `shown_state`) and is
    redelivered — by GitHub or by `redeliver` — as a failed one is.
    The row keeps when it moved (`delivery()`, and `recent`'s summaries): `received_at`, `queued_at`
    (the last time it became `queued`: classified, or put back by `recover`), `started_at` and
    `finished_at`; a redelivery clears all but the first.

    `claim` is the dispatcher's step for many processes at once: up to `limit` received rows, each
    taken by one caller only, decided (outside any transaction) and recorded in one short
    transaction, each row alone: one the database refuses is marked `failed` and the rest are
    recorded (a caller that dies mid-way leaves them `received`). `queued(key)`/`recover(key)` serve
    a worker that holds the key's lock; `open_keys` lists the keys with queued rows (the queue's
    backstop). `restart` starts a `running` row's next attempt in place (the store went away under
    the one before). `finish` also deletes the finished jobs' journals (`job_journal`, written by
    the review memory for bot.pipeline.journal), in the same transaction: a journal lives only
    while its job is open, so a redelivered job starts afresh."""

    on_received: Callable[[], None]  # called after a new delivery is committed (the dispatcher's wake-up)
    unclassified: int  # rows in `received` as this process knows them (metrics, the dispatcher's backlog)
    intake_in_flight: int  # webhook requests waiting for their commit

    async def accept(self, item: Incoming) -> bool: ...
    async def received(self, limit: int) -> list[Received]: ...
    async def classified(self, deliveries: list[Classified]) -> None: ...
    async def claim(self, limit: int, decide: Decide) -> list[DeliveryDecision]: ...
    async def recover(self, key: str | None = None) -> int: ...
    async def queued(self, key: str | None = None) -> list[Queued]: ...
    async def open_keys(self) -> list[str]: ...
    async def count(self, state: str | None = None) -> int: ...
    async def start(self, delivery_id: str) -> Started | None: ...
    async def restart(self, delivery_id: str) -> Started | None: ...
    async def finish(self, delivery_ids: list[str], state: str, error: str | None = None,
                     from_state: str = "running", wait: bool = True,
                     review: ReviewResult | None = None) -> None: ...
    async def delivery(self, delivery_id: str) -> dict[str, Any] | None: ...
    async def prune(self, before: float, limit: int) -> int: ...
    async def ping(self) -> None: ...
    # installations: which exist and the repositories each reaches, as installation events said
    async def record_installation(self, event: str, payload: dict[str, Any]) -> None: ...
    async def installation(self, installation_id: int) -> dict[str, Any] | None: ...
    async def installation_for(self, full_name: str) -> int | None: ...
    async def installations(self) -> list[dict[str, Any]]: ...  # every one not deleted, by id
    async def last_reviews(self) -> list[dict[str, Any]]: ...  # per repository, its newest reviewed row
    # the admin console: pages of deliveries without their bodies, counts, and its "Redeliver"
    async def recent(self, *, before_seq: int | None = None, limit: int = 200, repo: str | None = None,
                     event: str | None = None, state: str | None = None,
                     since: float | None = None, pr_number: int | None = None) -> list[dict[str, Any]]: ...
    async def shown_states_since(self, since: float) -> dict[str, int]: ...
    async def redeliver(self, delivery_id: str) -> bool: ...


@dataclass(frozen=True)
class TimelineEntry:
    """One attempt of a delivery's job as the console's recorder wrote it: `body` is that
    recorder's JSON (bot.server.jobs.timeline.Attempt), kept as it is."""

    delivery_id: str
    attempt: int
    body: dict[str, Any]


class TimelineStore(Protocol):
    """The `delivery_timeline` table: one row per (delivery, attempt); writing a row again replaces
    it. Rows go with their delivery, in the same transaction, when `DeliveryStore.prune` removes it.
    `wait=False` may leave the commit to the next batch, as `DeliveryStore.finish` does: a job's
    end need not wait for a sync to record what it did (a crash may lose that row, never a delivery)."""

    async def write(self, entry: TimelineEntry, wait: bool = True) -> None: ...
    async def attempts(self, delivery_id: str) -> list[TimelineEntry]: ...


@dataclass(frozen=True)
class AuditEntry:
    """One change an administrator made (or the server made on its own: an admin file reloaded):
    `actor` is the signed-in username, "break-glass token", or "server"; `ip` the client address
    the server saw (None for the server's own); `action` one of bot.audit.log.ACTIONS; `target` what was
    changed (`oidcconnectors/okta`, a delivery id, the admin file's path); `account` the GitHub
    account it belongs to (None: instance-wide, seen only with an un-narrowed `audit:read`);
    `details` names only (the fields a connector change touched), never a secret value."""

    at: float
    actor: str
    ip: str | None
    action: str
    target: str
    account: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    seq: int | None = None  # the store's, once recorded: newest entries have the highest


@dataclass(frozen=True)
class AuditQuery:
    """A page of the audit log, newest first: entries with `seq` below `before_seq`, matching
    every filter given; `with_account` leaves out instance-wide entries (account None)."""

    limit: int = 100
    before_seq: int | None = None
    actor: str | None = None
    action: str | None = None
    since: float | None = None
    until: float | None = None
    with_account: bool = False


class AuditStore(Protocol):
    """The `audit_log` table (schema version 12): appended to, read newest first, and pruned by
    age like finished deliveries (bot/server/jobs/retention.py)."""

    async def record(self, entry: AuditEntry) -> int: ...
    async def entries(self, query: AuditQuery) -> list[AuditEntry]: ...
    async def prune(self, before: float, limit: int) -> int: ...


Build = Callable[[dict | None], dict]


class ConnectorStore(Protocol):
    """Connector objects, written optimistically as in Kubernetes: a writer naming the
    `resourceVersion` it read wins only if nobody wrote in between (else Conflict). One counter
    per store numbers every change (`resourceVersion`), another every object created
    (`status.serviceResourceID`)."""

    async def get(self, kind: str, name: str) -> dict | None: ...
    async def list(self, kind: str) -> tuple[list[dict], str]: ...
    async def put(self, kind: str, name: str, expected_version: str | None, build: Build) -> tuple[dict, bool]: ...
    async def delete(self, kind: str, name: str) -> dict | None: ...


class Storage(Protocol):
    """One backend: its stores, opened and closed together (migrations run in `open`)."""

    url: str

    @property
    def deliveries(self) -> DeliveryStore: ...
    @property
    def connectors(self) -> ConnectorStore: ...
    @property
    def timeline(self) -> TimelineStore: ...
    @property
    def audit(self) -> AuditStore: ...
    @property
    def coordination(self) -> Any: ...  # bot.github.coordination.Coordination, or None: in-process

    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def schema_version(self) -> int: ...
