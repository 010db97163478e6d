"""Every secret a run knows, from its settings and its environment: the one list the run's
redactor is made from (tools' text, spans) and that no tool server's environment holds.

The API key; the user information and query of the model's, the wiki's and the mirror's
URLs; each MCP server's credentials (``McpServer.secrets``: its ``env`` values, headers, URL
and what looks like a credential on its command line) and the variables its ``pass_env``
hands it; and every
environment variable that holds a credential (``environment.credential_variable``), with what
it carries (a URL's password, each OTLP header's value). A variable that is only a switch
(``DISABLE_AUTH=true``) or names a file (``SSH_AUTH_SOCK=/run/…``,
``GOOGLE_APPLICATION_CREDENTIALS=~/key.json``) holds no secret to mask (masking "true" or a
folder everywhere would hide what tools say), though no server gets it either.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote

from react_cli.infra.credentials import credential_secrets, url_secrets
from react_cli.settings.environment import OTLP_HEADERS_ENV, credential_variable
from react_cli.settings.settings import Settings

_SWITCHES = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null"})


def known_secrets(settings: Settings, environ: Mapping[str, str]) -> list[str]:
    """The secrets a run knows (see the module docstring): no tool's process or output, no
    span, may hold them."""
    found = [settings.api_key or "", *url_secrets(settings.base_url), *url_secrets(settings.wiki)]
    found += [secret for replica in settings.replicas for secret in url_secrets(replica)]
    found += url_secrets(settings.data_url or "")
    for server in settings.mcp:
        found += server.secrets()
        found += [environ[name] for name in server.pass_env if name in environ]
    found += environment_secrets(environ)
    return [secret for secret in found if secret]


def environment_secrets(environ: Mapping[str, str]) -> list[str]:
    """What the environment's credential variables hold."""
    found: list[str] = []
    for name, value in environ.items():
        said = value.strip()
        if not credential_variable(name, value) or said.lower() in _SWITCHES:
            continue
        if said.startswith(("/", "~")):
            continue
        found.append(value)
        if "://" in value:
            found += url_secrets(value.strip())
        if name in OTLP_HEADERS_ENV:
            found += header_secrets(value)
    return found


def header_secrets(value: str) -> list[str]:
    """Each value of an OTLP header variable (``key=value,...``, values percent-encoded), and
    what an ``Authorization`` among them carries (``Bearer X``: ``X``)."""
    found: list[str] = []
    for pair in value.split(","):
        _, equals, said = pair.partition("=")
        if equals and said.strip():
            found += {unquote(said).strip(), *credential_secrets(unquote(said).strip())}
    return found
