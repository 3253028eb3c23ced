"""Maintenance jobs over memory files: decay, cleanup, retention, promote, backup, check.

Each job is a plain function over one database file; :func:`run_job` runs one under a
per-(job, file) lock and records it in the run history.
"""

from .context import Cancelled, JobContext, Outcome
from .jobs import JOBS, OUTCOMES, JobReport, JobSpec, job_lock, run_job

__all__ = ["JOBS", "OUTCOMES", "Cancelled", "JobContext", "JobReport", "JobSpec", "Outcome", "job_lock", "run_job"]
