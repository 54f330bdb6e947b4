"""Hugging Face's apply_chat_template Jinja environment, rebuilt with plain jinja2.

Mirrors transformers.utils.chat_template_utils (_compile_jinja_template /
render_jinja_template): ImmutableSandboxedEnvironment(trim_blocks=True,
lstrip_blocks=True, extensions=[AssistantTracker, loopcontrols]), `tojson`
overridden with json.dumps(ensure_ascii=False, indent, separators, sort_keys),
globals raise_exception (jinja2.exceptions.TemplateError) and strftime_now.
strftime_now is pinned to FIXED_NOW so goldens do not depend on the day they are
made. transformers itself is not needed.
"""
import copy
import datetime
import json

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment

FIXED_NOW = datetime.datetime(2026, 1, 15, 0, 0, 0)
FIXED_EPOCH = int((FIXED_NOW - datetime.datetime(1970, 1, 1)).total_seconds())


class AssistantTracker(Extension):
    """{% generation %}...{% endgeneration %}: renders its body (HF records the span)."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_env(immutable=True):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return FIXED_NOW.strftime(format)

    cls = ImmutableSandboxedEnvironment if immutable else SandboxedEnvironment
    env = cls(trim_blocks=True, lstrip_blocks=True, extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(template, context, immutable=True):
    """Returns {"output": str} or {"error": {"type": ..., "message": ...}}."""
    try:
        env = make_env(immutable)
        return {"output": env.from_string(template).render(**copy.deepcopy(context))}
    except Exception as e:  # the golden records what jinja2 raised
        message = e.message if isinstance(e, jinja2.exceptions.TemplateSyntaxError) else str(e)
        return {"error": {"type": type(e).__name__, "message": message}}
