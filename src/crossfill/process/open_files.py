"""The process's limit on open files, raised at start to what the system lets it have.

Every client connection, chain connection and database file is a file descriptor. Shells and
service managers commonly start processes with a soft limit of 1,024 under a hard limit
hundreds of times higher; at 1,024 a thousand held connections would leave the API unable to
accept and the workers unable to reach their chains until they close (`api.http_protocol`
closes slow ones within its deadlines). The service raises its soft limit to the hard one,
as servers commonly do; nothing in it uses `select()`, whose sets stop at 1,024.
"""

from __future__ import annotations

import resource

import structlog

log = structlog.get_logger(__name__)

# Where the hard limit is unlimited (not on Linux, whose kernel caps it): raised this far.
UNLIMITED_RAISED_TO = 65_536


def raise_open_files_limit() -> int:
    """Raise the soft limit on open files to the hard limit; the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = UNLIMITED_RAISED_TO if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError) as exc:
            log.warning("open files limit not raised", soft=soft, hard=hard, error=str(exc))
            return soft
        log.info("open files limit raised", soft=wanted, was=soft)
        return wanted
    return soft
