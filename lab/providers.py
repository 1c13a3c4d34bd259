"""Which request parameters a provider accepts for a model: the one place every OpenAI-compatible call asks.

Why a table and not "send what vLLM takes": the real providers refuse requests vLLM accepts. OpenAI answers
GPT-5 and every other reasoning model (o1, o3, o4-mini) with HTTP 400 for `max_tokens` ("Use
'max_completion_tokens' instead"), for a temperature other than 1, and for `top_p`, penalties and logprobs;
a call refused that way is lost, whatever the evaluation meant to measure. vLLM and the hosts that follow
its API (Together, DeepInfra, NVIDIA NIM) take `max_tokens` and any sampling parameter. So each endpoint is
placed once, at construction, as a `Contract` (provider x model family), and every request it sends is
built by `Contract.options`:

- `provider`: where the endpoint is. `openai` (api.openai.com, Azure OpenAI) and `compatible` (vLLM,
  SGLang, a server on this machine or a private network, and the hosts in `COMPATIBLE_HOSTS`). A URL on
  any other public host is not guessed: the backend names its `provider`, or the command says how.
- `family`, within `openai`: `reasoning` (GPT-5, GPT-5-mini, GPT-5-nano, o-series) or `chat` (GPT-4o,
  GPT-4.1, GPT-5-chat). A model the table cannot place is refused before any call, with how to name its
  family (`model_family:` in the backend, `--orchestrator-family` for an orchestrator). `compatible`
  endpoints have one family, `open`.

A parameter the caller set on purpose (a toolkit's `temperature`, `--temperature`, `--top-p`) that the
model would refuse is refused here, in one line, before any call (`Contract.check`). A value a protocol
filled in as its default (the lab's experts at temperature 0.2) is left out for a model that takes only
its own default: that is what the model runs at anyway, so leaving it out changes nothing but the 400.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from lab.errors import LabInputError

Provider = Literal["openai", "compatible"]
PROVIDERS: tuple[Provider, ...] = ("openai", "compatible")
#: Hosts that speak OpenAI's API with OpenAI's rules (Azure OpenAI serves the same models the same way).
OPENAI_HOSTS = ("api.openai.com", ".openai.azure.com")
#: Public hosts that follow vLLM's reading of the API: `max_tokens`, any sampling parameter.
COMPATIBLE_HOSTS = ("api.together.xyz", "api.deepinfra.com", "integrate.api.nvidia.com", "api.fireworks.ai")
#: Efforts OpenAI's reasoning models take (`reasoning_effort`); `minimal` is GPT-5's.
REASONING_EFFORTS = ("minimal", "low", "medium", "high")
#: The parameters sampling settings travel as; `Contract.check` names these when refusing one.
SAMPLING = ("temperature", "top_p")


@dataclass(frozen=True)
class Family:
    """What one model family of one provider accepts."""

    name: str
    #: the parameter the completion's token limit travels as
    token_parameter: Literal["max_tokens", "max_completion_tokens"]
    #: parameters the model takes only at one value (its default); any other value is a 400
    only_default: tuple[tuple[str, float], ...] = ()
    #: parameters the model refuses whatever their value
    refused: frozenset[str] = frozenset()
    #: whether `reasoning_effort` is a parameter of this model
    reasoning_effort: bool = False


REASONING = Family(
    "reasoning", "max_completion_tokens", only_default=(("temperature", 1.0),),
    refused=frozenset({"max_tokens", "top_p", "presence_penalty", "frequency_penalty", "logprobs",
                       "top_logprobs", "logit_bias"}),
    reasoning_effort=True,
)
CHAT = Family("chat", "max_completion_tokens")
OPEN = Family("open", "max_tokens", reasoning_effort=True)  # vLLM passes reasoning_effort to models that read it

FAMILIES: dict[Provider, dict[str, Family]] = {
    "openai": {"reasoning": REASONING, "chat": CHAT},
    "compatible": {"open": OPEN},
}
#: OpenAI model ids -> family, first match wins (a dated snapshot `gpt-5-2025-08-07` matches its model).
OPENAI_MODELS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(gpt-5(\.\d+)?-chat|chatgpt-)"), "chat"),
    (re.compile(r"^(gpt-5|o\d)([.-]|$)"), "reasoning"),
    (re.compile(r"^(gpt-4|gpt-3\.5)"), "chat"),
)


@dataclass(frozen=True)
class Contract:
    """The parameters one endpoint takes for one model: what `options` sends, what `check` refuses."""

    provider: Provider
    family: Family
    model: str

    def __str__(self) -> str:
        return f"{self.model} on {self.provider} ({self.family.name})"

    def check(self, where: str, **chosen: float | str | None) -> None:
        """Refuse, in one line naming `where`, a setting chosen on purpose that this model would refuse:
        `chosen` holds sampling values (`temperature=0.2`) and `reasoning_effort`; None means not set."""
        for name, value in chosen.items():
            if value is None:
                continue
            if name == "reasoning_effort":
                if not self.family.reasoning_effort:
                    raise LabInputError(f"{where}: {self} takes no reasoning_effort; leave it out")
                if value not in REASONING_EFFORTS and self.provider == "openai":
                    raise LabInputError(f"{where}: reasoning_effort {value!r} for {self}: expected one of "
                                        f"{', '.join(REASONING_EFFORTS)}")
                continue
            if name in self.family.refused:
                raise LabInputError(f"{where}: {self} refuses {name} (any value); leave it out")
            default = dict(self.family.only_default).get(name)
            if default is not None and float(value) != default:
                raise LabInputError(f"{where}: {self} takes {name} {default:g} only (got {value:g}); "
                                    f"leave it out or set it to {default:g}")

    def options(self, *, max_tokens: int | None = None, temperature: float | None = None,
                top_p: float | None = None, reasoning_effort: str | None = None) -> dict[str, Any]:
        """The request parameters for these settings: the token limit under this model's name for it,
        and each sampling value the model takes (one it takes only at its default goes out only at it)."""
        options: dict[str, Any] = {}
        if max_tokens is not None:
            options[self.family.token_parameter] = max_tokens
        for name, value in (("temperature", temperature), ("top_p", top_p)):
            if value is None or name in self.family.refused:
                continue
            default = dict(self.family.only_default).get(name)
            if default is None or float(value) == default:
                options[name] = value
        if reasoning_effort is not None and self.family.reasoning_effort:
            options["reasoning_effort"] = reasoning_effort
        return options

    @property
    def takes_logprobs(self) -> bool:
        return "logprobs" not in self.family.refused


def provider_of(base_url: str, where: str) -> Provider:
    """The provider a URL is on: OpenAI's hosts, or a compatible server (this machine, a private network, a
    plain-http server, a known compatible host). Any other public host is refused: its rules are unknown."""
    host = (urlsplit(base_url).hostname or "").lower()
    if host == OPENAI_HOSTS[0] or host.endswith(OPENAI_HOSTS[1]):
        return "openai"
    if host in COMPATIBLE_HOSTS or _local(host) or base_url.startswith("http://"):
        return "compatible"
    raise LabInputError(f"{where}: cannot tell which provider serves {base_url}, so not which parameters it "
                        f"accepts; name it ({' or '.join(PROVIDERS)}: `provider:` in a toolkit backend, "
                        "--orchestrator-provider for an orchestrator)")


def _local(host: str) -> bool:
    """Loopback, private and link-local addresses, single-label names and `.local`/`.internal` hosts."""
    if host in ("localhost", "") or "." not in host or host.endswith((".local", ".internal", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_private or address.is_loopback or address.is_link_local


def contract_for(model: str, base_urls: list[str], where: str, provider: str | None = None,
                 family: str | None = None) -> Contract:
    """The contract of `model` served at `base_urls` (replicas share one), placed from the URL and the model
    id unless `provider` / `family` name them. Raises `LabInputError` naming `where` and how to configure."""
    if provider is not None and provider not in PROVIDERS:
        raise LabInputError(f"{where}: unknown provider {provider!r} (known: {', '.join(PROVIDERS)})")
    placed = {provider_of(url, where) for url in base_urls} if provider is None else {provider}
    if len(placed) > 1:
        raise LabInputError(f"{where}: replicas on different providers ({', '.join(sorted(placed))}); "
                            "list replicas of one provider")
    chosen: Provider = placed.pop()  # type: ignore[assignment]
    families = FAMILIES[chosen]
    if family is not None:
        if family not in families:
            raise LabInputError(f"{where}: unknown model family {family!r} for provider {chosen} "
                                f"(known: {', '.join(families)})")
        return Contract(chosen, families[family], model)
    if len(families) == 1:
        return Contract(chosen, next(iter(families.values())), model)
    name = model.lower().rsplit("/", 1)[-1]
    for pattern, placed_family in OPENAI_MODELS:
        if pattern.search(name):
            return Contract(chosen, families[placed_family], model)
    raise LabInputError(f"{where}: cannot place model {model!r} among {chosen}'s model families "
                        f"({', '.join(families)}), so not which parameters it accepts; name it "
                        "(`model_family:` in a toolkit backend, --orchestrator-family for an orchestrator)")


def refusal_line(status: int, body: Any, contract: Contract) -> str:
    """One line for a request a server refused: `HTTP 400 for gpt-5 on openai (reasoning), parameter
    'max_tokens': Unsupported parameter: ...` when `body` (the JSON text, the parsed body, or the SDK's error
    object) is an OpenAI error naming a parameter; else the status and the start of the body."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return " ".join(f"HTTP {status}: {body[:200]}".split())
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict) or not error.get("message"):
        return " ".join(f"HTTP {status}: {str(body)[:200]}".split())
    param = " ".join(str(error.get("param") or "").split())
    named = f", parameter '{param}'" if param else ""
    return " ".join(f"HTTP {status} for {contract}{named}: {str(error['message'])[:300]}".split())
