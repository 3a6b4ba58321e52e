"""One remembered session per running client (issue 14, item 11): an ``flock`` per server
and name, next to the session file, held for as long as the client runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from client_cli.sessions import SessionFile

URL = "ws://127.0.0.1:8765"

HOLDER = """
import sys
from pathlib import Path
from client_cli.sessions import SessionFile
files = SessionFile(Path(sys.argv[1]))
print("claimed" if files.claim(sys.argv[2], "Ana") else "refused", flush=True)
sys.stdin.read()
"""


def test_a_claimed_session_is_refused_to_a_second_client(tmp_path: Path) -> None:
    path = tmp_path / "aluette" / "sessions.json"
    first, second = SessionFile(path), SessionFile(path)
    assert first.claim(URL, "Ana")
    assert not second.claim(URL, "Ana")          # same server, same name: in use
    assert second.claim(URL, "Bo")               # another name has its own session
    assert SessionFile(path).claim("ws://elsewhere:8765", "Ana")
    first.release()
    assert SessionFile(path).claim(URL, "Ana")   # released: free again


def test_a_killed_client_leaves_its_session_free(tmp_path: Path) -> None:
    path = tmp_path / "aluette" / "sessions.json"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), URL],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "claimed"
        assert not SessionFile(path).claim(URL, "Ana")
    finally:
        holder.kill()                            # SIGKILL: no clean-up code runs
        holder.wait(10)
    assert SessionFile(path).claim(URL, "Ana")


def test_the_lock_file_sits_next_to_the_session_file(tmp_path: Path) -> None:
    path = tmp_path / "aluette" / "sessions.json"
    files = SessionFile(path)
    assert files.claim(URL, "Ana")
    lock = files.lock_path(URL, "Ana")
    assert lock.parent == path.parent and lock.exists()
    assert lock.stat().st_mode & 0o777 == 0o600
