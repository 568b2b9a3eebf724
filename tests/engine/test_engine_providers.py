"""The provider edge over real HTTP against the chat double, and apiKey reference resolution."""

import pytest

from bot.config.model import Provider
from bot.engine.api_keys import ApiKeyError, resolve_api_key
from bot.engine.providers import Completion, OpenAIChatClient, ProviderError, ToolsRefused, make_client, split_model_ref
from bot.secrets.redaction import redact
from tests.support.chat_double import Reply, asks, failing
from tests.support.engine_support import API_KEY

pytest_plugins = ("tests.support.engine_fixtures",)

MESSAGES = [{"role": "user", "content": "review this"}]
SCHEMA = {"type": "object"}


def client(double, session, *, api_key="env://CHAT_KEY", timeout=10.0, environ=None, secrets_dir=None):
    provider = Provider("local", "openai", double.base_url, api_key, timeout, "instance")
    return OpenAIChatClient(provider, session, environ=environ if environ is not None else {"CHAT_KEY": API_KEY},
                            secrets_dir=secrets_dir)


def test_env_and_secret_references_resolve_at_call_time(tmp_path):
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "key").write_text("from-file\n")
    assert resolve_api_key("env://K", environ={"K": "from-env"}, secrets_dir=None) == "from-env"
    assert resolve_api_key("secret://llm/key", environ={}, secrets_dir=tmp_path) == "from-file"
    (tmp_path / "llm" / "key").write_text("rotated\n\n")  # only one trailing newline is stripped
    assert resolve_api_key("secret://llm/key", environ={}, secrets_dir=str(tmp_path)) == "rotated\n"


@pytest.mark.parametrize("reference, secrets_dir, message", [
    ("env://MISSING", None, "env://MISSING: environment variable MISSING is not set"),
    ("env://EMPTY", None, "env://EMPTY: environment variable EMPTY is empty"),
    ("secret://llm/absent", "store", "secret://llm/absent: the secret store does not hold it: create key `absent`"),
    ("secret://llm/empty", "store", "secret://llm/empty: the secret store holds it empty"),
    ("secret://llm/key", None, "secret://llm/key: no secret store is configured (REVIEWER_SECRETS_DIR is unset)"),
    ("secret://../etc/passwd", "store", "secret://../etc/passwd: the secret NAME must be a lowercase RFC 1123"),
    ("sk-literal-key", None, "the apiKey is not a reference: use secret://NAME/KEY or env://VAR"),
])
def test_unresolvable_references_name_the_reference(tmp_path, reference, secrets_dir, message):
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "empty").write_text("\n")
    with pytest.raises(ApiKeyError) as caught:
        resolve_api_key(reference, environ={"EMPTY": ""}, secrets_dir=tmp_path if secrets_dir else None)
    assert message in str(caught.value) and "sk-literal-key" not in str(caught.value)


def test_model_references_split_at_the_first_slash():
    assert split_model_ref("local/meta-llama/Llama-3-8B") == ("local", "meta-llama/Llama-3-8B")
    with pytest.raises(ProviderError, match="not a <provider>/<model> reference"):
        split_model_ref("gpt-4o")


async def test_the_request_is_an_openai_chat_completion_with_the_key_and_schema(double, session):
    double.answer("small-model", Reply(content='{"findings": []}'))
    text = await client(double, session).complete("small-model", MESSAGES, SCHEMA)
    assert text == '{"findings": []}'
    [sent] = double.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["Authorization"] == f"Bearer {API_KEY}"
    assert sent.body["model"] == "small-model" and sent.body["messages"] == MESSAGES
    assert sent.body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "review_findings", "schema": SCHEMA}}


async def test_a_provider_without_api_key_gets_no_authorization_header(double, session):
    double.api_key = None  # a local llama.cpp / Ollama server
    double.answer("m", Reply(content="ok"))
    await client(double, session, api_key=None).complete("m", MESSAGES, SCHEMA)
    assert "Authorization" not in double.requests[0].headers


async def test_a_rejected_response_format_is_retried_without_it_and_not_sent_again(double, session):
    double.answer("m", Reply(content='{"findings": []}', rejects_response_format=True))
    chat = client(double, session)
    assert await chat.complete("m", MESSAGES, SCHEMA) == '{"findings": []}'
    assert await chat.complete("m", MESSAGES, SCHEMA) == '{"findings": []}'
    assert ["response_format" in r.body for r in double.requests] == [True, False, False]


async def test_http_errors_timeouts_and_bad_bodies_are_provider_errors(double, session):
    double.answer("broken", failing(500, "upstream exploded"))
    with pytest.raises(ProviderError, match=r"provider 'local': HTTP 500: upstream exploded"):
        await client(double, session).complete("broken", MESSAGES, SCHEMA)
    double.answer("slow", Reply(content="late", delay=30))
    with pytest.raises(ProviderError, match=r"no answer within 0.2 s \(timeout\)"):
        await client(double, session, timeout=0.2).complete("slow", MESSAGES, SCHEMA)
    double.answer("empty", Reply(content=""))
    with pytest.raises(ProviderError, match="the completion has no text content"):
        await client(double, session).complete("empty", MESSAGES, SCHEMA)


async def test_an_echoed_key_is_redacted_from_errors(double, session):
    double.answer("m", failing(401, f"Incorrect API key provided: {API_KEY}"))
    with pytest.raises(ProviderError) as caught:
        await client(double, session).complete("m", MESSAGES, SCHEMA)
    assert API_KEY not in str(caught.value) and "Incorrect API key provided: <redacted>" in str(caught.value)


async def test_a_key_straddling_the_excerpt_cut_leaves_no_prefix(double, session):
    for padding in range(290, 300):  # the key starts just before, at and after the 300th character
        double.answer("m", failing(401, "x" * padding + f" {API_KEY} was refused"))
        with pytest.raises(ProviderError) as caught:
            await client(double, session).complete("m", MESSAGES, SCHEMA)
        assert API_KEY[:6] not in str(caught.value), padding


async def test_every_resolved_key_is_registered_with_the_log_redactor(double, session, tmp_path):
    key = "sk-rotated-only-ever-read-from-the-store-41c2"
    assert redact(f"auth failed for {key}") == f"auth failed for {key}"  # not known before it is read
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "key").write_text(key + "\n")
    double.api_key = key
    double.answer("m", Reply(content="ok"))
    await client(double, session, api_key="secret://llm/key", secrets_dir=tmp_path).complete("m", MESSAGES, SCHEMA)
    assert redact(f"auth failed for {key}") == "auth failed for <redacted>"


async def test_a_missing_key_fails_before_any_request_naming_the_reference(double, session, tmp_path):
    with pytest.raises(ProviderError, match=r"apiKey secret://llm/key: the secret store does not hold it"):
        chat = client(double, session, api_key="secret://llm/key", secrets_dir=tmp_path)
        await chat.complete("m", MESSAGES, SCHEMA)
    assert double.requests == []


async def test_the_secret_file_is_read_on_every_call(double, session, tmp_path):
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "key").write_text(API_KEY + "\n")
    double.answer("m", Reply(content="ok"))
    chat = client(double, session, api_key="secret://llm/key", secrets_dir=tmp_path)
    await chat.complete("m", MESSAGES, SCHEMA)
    (tmp_path / "llm" / "key").write_text("rotated-key\n")
    with pytest.raises(ProviderError, match="HTTP 401"):
        await chat.complete("m", MESSAGES, SCHEMA)
    assert [r.headers["Authorization"] for r in double.requests] == [f"Bearer {API_KEY}", "Bearer rotated-key"]


async def test_an_unknown_provider_type_is_refused(session):
    provider = Provider("x", "anthropic", "http://127.0.0.1:1", None, 1.0, "instance")
    with pytest.raises(ProviderError, match="type 'anthropic' is not supported"):
        make_client(provider, session)


async def test_an_unreachable_provider_is_a_provider_error(session):
    provider = Provider("down", "openai", "http://127.0.0.1:9/v1", None, 2.0, "instance")
    with pytest.raises(ProviderError, match="provider 'down': request failed"):
        await make_client(provider, session).complete("m", MESSAGES, SCHEMA)


TOOLS = [{"type": "function", "function": {"name": "read", "description": "Lines of a file.",
                                           "parameters": {"type": "object", "properties": {}}}}]


async def test_tool_calls_are_read_when_tools_are_offered_and_ignored_when_not(double, session):
    double.answer("m", asks(("read", {"path": "a.py"}), ("read", '{"path": 1')), Reply(content='{"findings": []}'))
    completion = await client(double, session).chat("m", MESSAGES, SCHEMA, TOOLS)
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == [
        ("call_1", "read", '{"path": "a.py"}'), ("call_2", "read", '{"path": 1')]  # arguments as written
    assert completion.text is None
    assert double.requests[0].body["tools"] == TOOLS and double.requests[0].body["tool_choice"] == "auto"
    assert completion.message() == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a.py"}'}},
        {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": '{"path": 1'}}]}
    answer = await client(double, session).chat("m", MESSAGES, SCHEMA)  # no tools offered: a text answer
    assert answer == Completion('{"findings": []}') and "tools" not in double.requests[1].body


async def test_a_provider_refusing_tools_raises_tools_refused_and_other_400s_do_not(double, session):
    double.answer("m", Reply(content='{"findings": []}', rejects_tools=True))
    with pytest.raises(ToolsRefused, match="provider 'local' refused tools: HTTP 400: .*does not support tools"):
        await client(double, session).chat("m", MESSAGES, SCHEMA, TOOLS)
    assert await client(double, session).complete("m", MESSAGES, SCHEMA) == '{"findings": []}'
    double.answer("f", Reply(content='{"findings": []}', rejects_response_format=True))
    completion = await client(double, session).chat("f", MESSAGES, SCHEMA, TOOLS)  # a 400 about response_format
    assert completion.text == '{"findings": []}'
    assert [("tools" in r.body, "response_format" in r.body) for r in double.requests[-2:]] == [
        (True, True), (True, False)]
