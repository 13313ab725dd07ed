"""The job queue: queued, leased to one instance while running, finished, failed or cancelled."""

from __future__ import annotations

from typing import Any

from bathtub_api.ids import new_id, now
from bathtub_api.store.common import Driver, dumps, list_filters, loads


class JobQueries:
    db: Driver

    # -- jobs ----------------------------------------------------------------------------
    # A running job belongs to the instance named in lease_owner until lease_expires_at; every
    # write of a running job's outcome is guarded by that lease, so an instance that lost its
    # job (cancelled by the owner, or recovered after its lease ran out) never overwrites it.
    async def create_job(self, owner: str, action: str, args: dict[str, Any]) -> str:
        """A queued job, refused (402) past the owner's plan's concurrent jobs."""
        jid = new_id("job")
        async with self.db.transaction() as tx:
            await self.room_for_job(tx, owner)
            await tx.execute(
                "INSERT INTO jobs (id, owner, action, status, args, created_at) VALUES (?, ?, ?, 'queued', ?, ?)",
                jid, owner, action, dumps(args), now(),
            )
        return jid

    async def list_jobs(self, owner: str, limit: int, offset: int, *, name_contains: str | None = None,
                        created_after: float | None = None) -> list[dict[str, Any]]:
        """A page of the owner's jobs in creation order; a job's name is its kind (`rbd.simulate`)."""
        where, args = list_filters("action", name_contains, created_after)
        rows = await self.db.fetch(
            "SELECT id, action, status, message, created_at, started_at, finished_at FROM jobs WHERE owner = ?" + where
            + " ORDER BY created_at, id LIMIT ? OFFSET ?", owner, *args, limit, offset)
        return [dict(r) for r in rows]

    async def get_job(self, owner: str | None, job_id: str) -> dict[str, Any] | None:
        sql = (
            "SELECT id, owner, action, status, args, result, message, created_at, started_at, finished_at, "
            "lease_owner, lease_expires_at, attempts, progress, eta_s FROM jobs"
        )
        if owner is None:
            row = await self.db.fetchrow(sql + " WHERE id = ?", job_id)
        else:
            row = await self.db.fetchrow(sql + " WHERE id = ? AND owner = ?", job_id, owner)
        if row is None:
            return None
        return {**row, "args": loads(row["args"]), "result": loads(row["result"])}

    async def queue_position(self, job_id: str, created_at: float) -> int:
        """1 for the next queued job to start, 2 for the one after, ..."""
        row = await self.db.fetchrow(
            "SELECT COUNT(*) AS n FROM jobs "
            "WHERE status = 'queued' AND (created_at < ? OR (created_at = ? AND id < ?))",
            created_at, created_at, job_id,
        )
        return int(row["n"]) + 1 if row else 1

    async def claim_job(self, job_id: str, instance: str, lease_until: float) -> bool:
        """Take a queued job for `instance` (one instance wins); False if it is not queued."""
        n = await self.db.execute(
            "UPDATE jobs SET status = 'running', started_at = ?, lease_owner = ?, lease_expires_at = ?, "
            "attempts = attempts + 1, progress = 0, eta_s = NULL WHERE id = ? AND status = 'queued'",
            now(), instance, lease_until, job_id,
        )
        return n > 0

    async def renew_lease(
        self, job_id: str, instance: str, lease_until: float, progress: float | None, eta_s: float | None
    ) -> bool:
        """The heartbeat: extend the lease and publish progress. False if the job is no
        longer this instance's to run (cancelled, or recovered by another instance)."""
        n = await self.db.execute(
            "UPDATE jobs SET lease_expires_at = ?, progress = ?, eta_s = ? "
            "WHERE id = ? AND status = 'running' AND lease_owner = ?",
            lease_until, progress, eta_s, job_id, instance,
        )
        return n > 0

    async def finish_job(self, job_id: str, instance: str, result: Any) -> bool:
        return await self._settle(job_id, instance, "status = 'done', result = ?, progress = 1", dumps(result))

    async def fail_job(self, job_id: str, instance: str, message: str) -> bool:
        return await self._settle(job_id, instance, "status = 'failed', message = ?", message)

    async def _settle(self, job_id: str, instance: str, assignments: str, value: Any) -> bool:
        n = await self.db.execute(
            f"UPDATE jobs SET {assignments}, finished_at = ?, lease_owner = NULL, lease_expires_at = NULL, "
            "eta_s = NULL WHERE id = ? AND status = 'running' AND lease_owner = ?",
            value, now(), job_id, instance,
        )
        return n > 0

    async def requeue_job(self, job_id: str, instance: str) -> bool:
        """Give a running job back to the queue because this instance is stopping (not the
        job's fault, so the attempt is not counted); it starts afresh at the next claim."""
        n = await self.db.execute(
            "UPDATE jobs SET status = 'queued', started_at = NULL, lease_owner = NULL, lease_expires_at = NULL, "
            "progress = NULL, eta_s = NULL, attempts = attempts - 1 "
            "WHERE id = ? AND status = 'running' AND lease_owner = ?",
            job_id, instance,
        )
        return n > 0

    async def cancel_job(self, owner: str, job_id: str, message: str) -> bool:
        """Cancel a queued or running job of `owner`; False if it was in neither state."""
        n = await self.db.execute(
            "UPDATE jobs SET status = 'cancelled', message = ?, finished_at = ?, lease_owner = NULL, "
            "lease_expires_at = NULL, eta_s = NULL WHERE id = ? AND owner = ? AND status IN ('queued', 'running')",
            message, now(), job_id, owner,
        )
        return n > 0

    async def recover_expired_jobs(self, at: float, max_attempts: int, message: str) -> tuple[int, int]:
        """Running jobs whose lease ran out (their instance died): requeue them, or fail
        them with `message` once they used `max_attempts`. Returns (requeued, failed). A job
        left running before leases existed has no lease, so it counts as expired."""
        async with self.db.transaction() as tx:
            failed = await tx.execute(
                "UPDATE jobs SET status = 'failed', message = ?, finished_at = ?, lease_owner = NULL, "
                "lease_expires_at = NULL, eta_s = NULL "
                "WHERE status = 'running' AND COALESCE(lease_expires_at, 0) < ? AND attempts >= ?",
                message, at, at, max_attempts,
            )
            requeued = await tx.execute(
                "UPDATE jobs SET status = 'queued', started_at = NULL, lease_owner = NULL, lease_expires_at = NULL, "
                "progress = NULL, eta_s = NULL WHERE status = 'running' AND COALESCE(lease_expires_at, 0) < ?",
                at,
            )
        return requeued, failed

    async def queued_jobs(self) -> list[dict[str, Any]]:
        rows = await self.db.fetch(
            "SELECT id, owner, action, args FROM jobs WHERE status = 'queued' ORDER BY created_at, id"
        )
        return [{**r, "args": loads(r["args"])} for r in rows]

    async def purge_jobs(self, older_than: float) -> int:
        return await self.db.execute("DELETE FROM jobs WHERE created_at < ? AND status <> 'running'", older_than)
