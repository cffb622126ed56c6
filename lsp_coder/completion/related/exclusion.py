"""Which files never reach the model: what the user excludes, and files that hold secrets.

The user excludes with ``[context] exclude`` (gitignore patterns, like Copilot's content
exclusion), the ``.gitignore`` files, ``.git/info/exclude`` and ``.lspcoderignore`` files
(gitignore syntax, for what git keeps but the model should not see). Files that commonly hold
secrets (``SECRETS``) are excluded whatever the patterns say. Every source of other files'
context asks here before it reads a file, and an open document that is excluded gets no
completion (its own text would be the prompt).

Each ignore file applies to the paths below its folder, from the top of the git repository
holding the file (or the workspace folder) down to the file's own folder; a pattern that
matches excludes the file, whichever file holds it (a ``!`` re-include works within one ignore
file only: when in doubt, a file is kept out). Ignore files are read again when they change
(looked at once every ``RECHECK_S``).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from pathspec import GitIgnoreSpec

from .text import file_stamp, read_regular, uri_to_path

IGNORE_FILES = (".gitignore", ".lspcoderignore")
"""Ignore files read in every folder from the repository's top down to a file's folder."""

SECRETS = (
    ".env", ".env.*", "*.env", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks",
    "*.keystore", "*.kdbx", "*.ppk", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".htpasswd", ".git-credentials",
    "credentials", "credentials.*", "*.credentials", "secrets.*", "*.secret", "*.secrets",
    ".secrets/", ".aws/", ".ssh/", ".gnupg/", ".docker/config.json", "*.tfvars", "*.tfstate",
    "*.tfstate.*", "service-account*.json", "client_secret*.json")
"""Files that commonly hold secrets (gitignore patterns): never read for context, never
completed, even when no ignore file names them."""

_SECRETS = GitIgnoreSpec.from_lines(SECRETS)

RECHECK_S = 2.0
"""An ignore file is looked at (its size and time) at most this often."""

IGNORE_FILE_BYTES = 1 << 20
"""A larger ignore file is not read."""

FOLDERS_KEPT = 4096
"""Folders whose ignore files are remembered (the oldest looked at leave first)."""

Specs = tuple[tuple[str, GitIgnoreSpec], ...]
"""A folder's ignore files: (name, its patterns) each."""


class Exclusion:
    """Answers whether a file is excluded, and why (any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._roots: tuple[Path, ...] = ()
        self._patterns: tuple[str, ...] = ()
        self._ignore_files = True
        """Whether the ignore files exclude too."""
        self._spec = GitIgnoreSpec.from_lines([])
        self._folders: dict[Path, tuple[float, tuple, Specs]] = {}
        """Folder -> (when looked at, its ignore files' stamps, their patterns by name)."""
        self._tops: dict[Path, Path | None] = {}
        """Folder -> the top of the git repository holding it (None: none)."""

    def configure(self, roots: tuple[Path, ...], patterns: list[str],
                  ignore_files: bool = True) -> bool:
        """The workspace folders, ``[context] exclude`` and ``ignore_files``; True when they
        changed."""
        patterns_now = tuple(patterns)
        with self._lock:
            if (roots, patterns_now, ignore_files) == (self._roots, self._patterns,
                                                       self._ignore_files):
                return False
            self._roots, self._patterns = roots, patterns_now
            self._ignore_files = ignore_files
            self._spec = GitIgnoreSpec.from_lines(patterns_now)
            self._tops.clear()
            return True

    def allows(self, path: Path) -> bool:
        """Whether ``path`` may be read for context."""
        return self.reason(path) is None

    def allows_uri(self, source: Path | str) -> bool:
        """Whether the file or the document (a URI; one that names no file may) may be shown
        to the model."""
        path = source if isinstance(source, Path) else uri_to_path(source)
        return path is None or self.allows(path)

    def reason(self, path: Path) -> str | None:
        """Why ``path`` never reaches the model (None when it may)."""
        with self._lock:
            roots, spec, ignore_files = self._roots, self._spec, self._ignore_files
        root = next((r for r in roots if path.is_relative_to(r)), None)
        rel = path.relative_to(root).as_posix() if root is not None else path.as_posix()[1:]
        if _SECRETS.match_file(rel) or _SECRETS.match_file(path.name):
            return "it looks like a file that holds secrets"
        if spec.match_file(rel):
            return "[context] exclude names it"
        if not ignore_files:
            return None
        for folder, specs in self._ignore_chain(path.parent, root):
            rel_here = path.relative_to(folder).as_posix()
            for name, ignore in specs:
                if ignore.match_file(rel_here):
                    return f"{name} in {folder} names it"
        return None

    def _ignore_chain(self, folder: Path, root: Path | None) -> list[tuple[Path, Specs]]:
        """(folder, its ignore files' patterns) for each folder from the repository's top (else the
        workspace folder, else ``folder``) down to ``folder``."""
        top = self._top(folder) or root or folder
        if not folder.is_relative_to(top):
            top = folder
        chain = [folder, *[p for p in folder.parents if p.is_relative_to(top)]]
        out = []
        for current in reversed(chain):
            out.append((current, self._folder_spec(current, current == top)))
        return out

    def _top(self, folder: Path) -> Path | None:
        with self._lock:
            if folder in self._tops:
                return self._tops[folder]
        found = None
        for candidate in (folder, *folder.parents):
            try:
                if (candidate / ".git").exists():
                    found = candidate
                    break
            except OSError:
                break
        with self._lock:
            self._tops[folder] = found
        return found

    def _folder_spec(self, folder: Path, top: bool) -> Specs:
        """The patterns of ``folder``'s ignore files (and ``.git/info/exclude`` at the top),
        by the file's name."""
        now = time.monotonic()
        with self._lock:
            kept = self._folders.get(folder)
        if kept is not None and now - kept[0] < RECHECK_S:
            return kept[2]
        files = [folder / name for name in IGNORE_FILES]
        if top:
            files.append(folder / ".git" / "info" / "exclude")
        stamps = tuple(file_stamp(f) for f in files)
        if kept is not None and kept[1] == stamps:
            specs = kept[2]
        else:
            found = []
            for file, stamp in zip(files, stamps):
                data = read_regular(file, IGNORE_FILE_BYTES) if stamp is not None else None
                if data is not None:
                    lines = data.decode("utf-8", "replace").splitlines()
                    found.append((file.relative_to(folder).as_posix(),
                                  GitIgnoreSpec.from_lines(lines)))
            specs = tuple(found)
        with self._lock:
            self._folders[folder] = (now, stamps, specs)
            if len(self._folders) > FOLDERS_KEPT:
                self._folders.pop(next(iter(self._folders)))
        return specs
