"""Command line: the server, and commands for people (complete, try, doctor, bench)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from . import __version__
from .bench.commands import add_bench_commands
from .config import Config, ConfigError
from .config.files import default_config_path, load_file
from .shared.control import add_daemon_commands
from .tools.models import add_model_commands


def _config(path: str | None) -> Config:
    return load_file(Path(path) if path else default_config_path())


def _serve(args: argparse.Namespace) -> int:
    from .server.address import AddressError, is_loopback, parse_address
    from .server.lifecycle import exit_now

    try:
        config, problem = _config(args.config), None
    except ConfigError as exc:  # the server still starts, tells the client, uses defaults
        if exc.usable is not None:
            config, problem = exc.usable, f"lsp-coder: {exc}; using the default value"
        else:
            config, problem = Config(), f"lsp-coder: {exc}; using the default settings"
    if args.tcp:
        try:
            address, port = parse_address(args.tcp)
        except AddressError as exc:
            print(f"lsp-coder: --tcp {exc}", file=sys.stderr)
            return 2
        if not is_loopback(address):
            logging.getLogger("lsp_coder").warning(
                "--tcp %s: serving beyond this machine; anyone who can reach it can read"
                " the code sent to the server", args.tcp)
    if not args.tcp and config.server.shared and not args.no_shared:
        from .shared.forwarder import run_forwarder  # loads no model, nor pygls

        exit_now(run_forwarder(config, problem))
    from .server.app import build_server
    from .server.host import EngineHost
    from .server.serve import serve_stdio, serve_tcp

    host = EngineHost()

    def new_session():
        return build_server(host, config, startup_problem=problem)

    if args.tcp:
        try:
            code = serve_tcp(host, new_session, address, port)
        except OSError as exc:
            print(f"lsp-coder: --tcp {args.tcp}: {exc.strerror or exc}", file=sys.stderr)
            code = 2
    else:
        code = serve_stdio(host, new_session)
    exit_now(code)
    return code  # not reached


def _complete(args: argparse.Namespace) -> int:
    from .tools.complete import complete_at

    return complete_at(_config(args.config), args.location)


def _try(args: argparse.Namespace) -> int:
    from .tools.try_it import try_server

    return try_server(args.file, args.config, lines=args.lines)


def _doctor(args: argparse.Namespace) -> int:
    from .tools.doctor import doctor

    return doctor(_config(args.config))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lsp-coder", description=(
        "Local AI code completion over the Language Server Protocol. With no command, serve LSP"
        " over stdio."))
    parser.add_argument("--version", action="version", version=f"lsp-coder {__version__}")
    parser.add_argument("--config", help="TOML config file (default: $LSP_CODER_CONFIG or"
                        " $XDG_CONFIG_HOME/lsp-coder/config.toml)")
    parser.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="serve over TCP instead (several"
                        " editors at once, this process's own model)")
    parser.add_argument("--no-shared", action="store_true", help="over stdio, load the model"
                        " in this process instead of sharing the user's shared server"
                        " ([server] shared = false)")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log more to stderr (-vv for debug, which includes the LSP traffic)")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("complete", help="print the completion at FILE:LINE:COL (1-based)")
    p.add_argument("location")
    p.set_defaults(func=_complete)
    p = sub.add_parser("try", help="start the server as an editor would and type a file into it")
    p.add_argument("file", nargs="?", help="a source file (default: a built-in sample)")
    p.add_argument("--lines", type=int, default=3, help="how many lines to type")
    p.set_defaults(func=_try)
    p = sub.add_parser("daemon", help="the shared server every editor's lsp-coder forwards to:"
                       " status, stop")
    add_daemon_commands(p)
    p = sub.add_parser("doctor", help="check the model, its FIM template, memory and CPU/GPU")
    p.set_defaults(func=_doctor)
    p = sub.add_parser("bench", help="measure the real server: typing, idle time, a team on a"
                       " serving engine, cross-file context, ... (lsp-coder bench -h)")
    add_bench_commands(p)
    add_model_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = [logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)]
    logging.basicConfig(level=level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # pygls logs every message it sends or receives (document text, suggestions) at INFO.
    logging.getLogger("pygls").setLevel(logging.DEBUG if args.verbose >= 2 else logging.WARNING)
    try:
        if getattr(args, "func", None) is None:
            return _serve(args)
        return args.func(args)
    except ConfigError as exc:
        print(f"lsp-coder: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
