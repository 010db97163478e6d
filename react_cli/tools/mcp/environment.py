"""A stdio server's environment: the user's, without any credential.

The SDK's default is a short allow-list (``HOME``, ``PATH``, ``SHELL``, ``TERM``, ``USER``,
``LOGNAME``), narrower than a user expects (no ``LANG``, ``VIRTUAL_ENV``, proxies); the whole
environment would hand every server ``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY`` and the API
key, and from there the model, the trace and the spans. So a server gets every variable but
those holding a credential: the ones ``settings.environment.credential_variable`` says are (by
name or a URL value that carries one), and any variable holding a secret the run knows (the
API key, a URL's password, another server's credentials), unless its config entry names them
in ``pass_env``; its ``env`` table is set over that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from react_cli.infra.redaction import MIN_SECRET_CHARS
from react_cli.settings.environment import credential_variable
from react_cli.settings.mcp import McpServer


def server_environment(
    server: McpServer, environ: Mapping[str, str], secrets: Iterable[str | None]
) -> dict[str, str]:
    """The environment ``server``'s process starts with."""
    known = [s for s in secrets if s and len(s) >= MIN_SECRET_CHARS]
    own = set(server.pass_env)

    def withheld(name: str, value: str) -> bool:
        return credential_variable(name, value) or any(s in value for s in known)

    env = {k: v for k, v in environ.items() if k in own or not withheld(k, v)}
    env.update(server.env)
    return env
