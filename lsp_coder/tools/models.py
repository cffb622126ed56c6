"""``lsp-coder model list|pull|use NAME``: a bigger (or another) model in one command."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..model_registry import DEFAULT_NAME, PRESETS, HubFile, Preset, UnknownModel, files_of, find


def add_model_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``model`` and its subcommands on the CLI's subparsers."""
    parser = sub.add_parser("model", help="list, download and choose models (presets or any"
                            " owner/repo/file.gguf on the Hugging Face Hub)")
    actions = parser.add_subparsers(dest="model_command", required=True)
    p = actions.add_parser("list", help="the presets, their sizes and which are downloaded")
    p.set_defaults(func=_list)
    for name, what in (("pull", "download a model (and its draft) into the model cache"),
                       ("use", "download if needed, then make it the model in the user config")):
        p = actions.add_parser(name, help=what)
        p.add_argument("name", help=f"a preset, {DEFAULT_NAME!r} (use only), or"
                       " owner/repo/file.gguf[@revision]")
        p.add_argument("--draft", help="a draft model for owner/repo/file.gguf names (same"
                       " vocabulary), or 'none'")
        p.add_argument("--revision", help="branch, tag or commit of owner/repo/file.gguf"
                       " (default main)")
        p.set_defaults(func=_pull if name == "pull" else _use)


def _list(args: argparse.Namespace) -> int:
    from ..model_pull import is_pulled, partial_bytes

    rows = [(DEFAULT_NAME, "1.6 GB", "embedded",
             "Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 0.5B draft (the model extra)")]
    for preset in PRESETS:
        files = [f for f in files_of(preset) if f is not None]
        if all(is_pulled(f) for f in files):
            state = "yes"
        elif any(is_pulled(f) or partial_bytes(f) for f in files):
            state = "partly"
        else:
            state = "no"
        rows.append((preset.name, f"{preset.approx_bytes / 1e9:.1f} GB", state,
                     preset.description))
    width = max(len(r[0]) for r in rows)
    print(f"{'NAME':<{width}}  {'SIZE':>8}  {'DOWNLOADED':<10}  DESCRIPTION")
    for name, size, state, description in rows:
        print(f"{name:<{width}}  {size:>8}  {state:<10}  {description}")
    print("\nAlso any GGUF on the Hugging Face Hub: lsp-coder model use owner/repo/file.gguf;"
          " lsp-coder doctor recommends one for this machine.")
    return 0


def _pull(args: argparse.Namespace) -> int:
    try:
        _fetch(args)
    except (UnknownModel, _Failed) as exc:
        print(f"lsp-coder: {exc}", file=sys.stderr)
        return 1
    return 0


def _use(args: argparse.Namespace) -> int:
    from ..config import ConfigError
    from ..user_config import set_model_paths, user_config_path

    config_path = user_config_path(args.config)
    try:
        if args.name.strip().lower() == DEFAULT_NAME:
            set_model_paths(config_path, None, None)
            print(f"{config_path}: [model] path and draft_path removed: the embedded model runs")
            return 0
        target, draft = _fetch(args)
        set_model_paths(config_path, str(target), str(draft) if draft else None)
    except (UnknownModel, _Failed, ConfigError) as exc:
        print(f"lsp-coder: {exc}", file=sys.stderr)
        return 1
    print(f"{config_path}: [model] path = {str(target)!r}, draft_path ="
          f" {str(draft) if draft else 'none'!r}")
    print("editors pick it up when their lsp-coder restarts; lsp-coder doctor checks it")
    return 0


class _Failed(Exception):
    """A pull that failed; the message is for the user."""


def _fetch(args: argparse.Namespace) -> tuple[Path, Path | None]:
    """Download the target and draft ``args`` name; their local paths."""
    from ..model_pull import PullError, pull

    if args.name.strip().lower() == DEFAULT_NAME:
        raise UnknownModel(f"{DEFAULT_NAME!r} is installed with lsp-coder's model extra, not"
                           " pulled: lsp-coder model use default")
    model = find(args.name, args.revision)
    target, draft = files_of(model)
    if args.draft:
        if isinstance(model, Preset):
            raise UnknownModel(f"{model.name} comes with its own draft; --draft is for"
                               " owner/repo/file.gguf names")
        draft = None if args.draft.strip().lower() == "none" else _as_file(args.draft)
    paths: list[Path | None] = []
    for hub_file in (target, draft):
        if hub_file is None:
            paths.append(None)
            continue
        print(f"{hub_file.spec} @ {hub_file.revision[:12]}", file=sys.stderr)
        try:
            paths.append(_pull_with_bar(hub_file, pull))
        except PullError as exc:
            raise _Failed(str(exc)) from exc
        print(f"  -> {paths[-1]}", file=sys.stderr)
    return paths[0], paths[1]  # type: ignore[return-value]


def _as_file(spec: str) -> HubFile:
    model = find(spec)
    if isinstance(model, Preset):
        if model.draft is not None or model.target is None:
            raise UnknownModel(f"--draft takes a file (owner/repo/file.gguf), not the preset"
                               f" {model.name}")
        return model.target
    return model


def _pull_with_bar(hub_file: HubFile, pull) -> Path:
    """``pull`` with a tqdm bar while the downloaded file's sha256 is checked."""
    from tqdm import tqdm

    bar: tqdm | None = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, unit="B", unit_scale=True, desc="  checking sha256",
                       file=sys.stderr, leave=False)
        bar.update(done - bar.n)

    try:
        return pull(hub_file, progress)
    finally:
        if bar is not None:
            bar.close()
