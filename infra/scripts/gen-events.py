#!/usr/bin/env python3
"""Regenerate events/*.json: API Gateway HTTP API (payload 2.0) events and an EventBridge
scheduled event, for `sam local invoke -e` and the emulator tests in infra/check.

The bearer token is an HS256 JWT for the demo workspace that `make seed` creates, signed
with the local dev secret (shared/config.DevJWTSecret), valid until 2099: the events work
as they are against a seeded local database. infra/check replaces it with a fresh token.

    python3 infra/scripts/gen-events.py
"""
import base64
import hashlib
import hmac
import json
import os

DEV_SECRET = "agentpack-local-dev-secret-change-me"  # shared/config.DevJWTSecret
WS = "0a9e2f54-1c2b-4c1e-9f4a-6d0c8a1b2c3d"  # cmd/local demoWorkspace
CHAT = "c4a8e1f0-2b3d-4e5f-8a9b-0c1d2e3f4a5b"  # cmd/local demoChat
HOST = "abc123def4.execute-api.eu-west-1.amazonaws.com"
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "events")


def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def jwt(claims):
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    sig = hmac.new(DEV_SECRET.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(sig)}"


TOKEN = jwt({"sub": "dev-admin", "role": "admin", "workspaces": [WS],
             "iat": 1767225600, "exp": 4102358400})
n = [0]


def ev(method, route_key, raw_path, path_params=None, body=None, headers=None, qs="", auth=True):
    n[0] += 1
    h = {
        "host": HOST,
        "user-agent": "agentpack-events/1.0",
        "x-amzn-trace-id": "Root=1-67a1b2c3-0123456789abcdef012345%02d" % n[0],
        "x-forwarded-for": "203.0.113.10",
        "x-forwarded-port": "443",
        "x-forwarded-proto": "https",
    }
    if auth:
        h["authorization"] = "Bearer " + TOKEN
    if body is not None:
        h["content-type"] = "application/json"
        h["content-length"] = str(len(body))
    h.update(headers or {})
    e = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": raw_path,
        "rawQueryString": qs,
        "headers": h,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "abc123def4",
            "domainName": HOST,
            "domainPrefix": "abc123def4",
            "http": {"method": method, "path": raw_path, "protocol": "HTTP/1.1",
                     "sourceIp": "203.0.113.10", "userAgent": "agentpack-events/1.0"},
            "requestId": "Jx1b2c3d4EFGH%02d=" % n[0],
            "routeKey": route_key,
            "stage": "$default",
            "time": "01/Mar/2026:12:00:%02d +0000" % n[0],
            "timeEpoch": 1772366400000 + n[0] * 1000,
        },
        "isBase64Encoded": False,
    }
    if qs:
        e["queryStringParameters"] = dict(p.split("=", 1) for p in qs.split("&"))
    if path_params:
        e["pathParameters"] = path_params
    if body is not None:
        e["body"] = body
    return e


def rpc(method, params):
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                      separators=(",", ":"))


MCP = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
EVENTS = {
    "mcp-tools-list.json": ev("POST", "ANY /mcp/{workspaceId}", "/mcp/" + WS,
                              {"workspaceId": WS}, rpc("tools/list", {}), MCP),
    "mcp-initialize.json": ev("POST", "ANY /mcp", "/mcp", None,
                              rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                 "clientInfo": {"name": "agentpack-events", "version": "1.0.0"}}),
                              {"accept": "application/json, text/event-stream", "x-workspace-id": WS}),
    "mcp-get-405.json": ev("GET", "ANY /mcp", "/mcp", None, None, {"accept": "text/event-stream"}),
    "mcp-preflight.json": ev("OPTIONS", "ANY /mcp", "/mcp", None, None, {
        "origin": "https://app.agentpack.example", "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type,mcp-protocol-version"}, auth=False),
    "well-known-protected-resource.json": ev("GET", "GET /.well-known/oauth-protected-resource",
                                             "/.well-known/oauth-protected-resource", auth=False),
    "health.json": ev("GET", "GET /health", "/health", auth=False),
    "marketplace-catalog-list.json": ev("GET", "ANY /api/mcp-marketplace", "/api/mcp-marketplace",
                                        None, None, {"accept": "application/json"}),
    "connections-list.json": ev("GET", "ANY /api/mcp-connections", "/api/mcp-connections",
                                None, None, {"accept": "application/json"}, qs="workspaceId=" + WS),
    "pins-list.json": ev("GET", "ANY /api/chats/{chatId}/pins", "/api/chats/%s/pins" % CHAT,
                         {"chatId": CHAT}, None, {"accept": "application/json"}),
    "chat-tools.json": ev("GET", "GET /api/chats/{chatId}/tools", "/api/chats/%s/tools" % CHAT,
                          {"chatId": CHAT}, None, {"accept": "application/json"}),
    "chats-list.json": ev("GET", "ANY /api/chats", "/api/chats", None, None, {"accept": "application/json"}),
    "console-page.json": ev("GET", "GET /admin/{proxy+}", "/admin/", {"proxy": ""}, None,
                            {"accept": "text/html"}, auth=False),
    "healthcheck-scheduled.json": {
        "version": "0", "id": "f3c9a2b1-6d7e-4f80-9a1b-2c3d4e5f6a7b",
        "detail-type": "Scheduled Event", "source": "aws.events",
        "account": "123456789012", "time": "2026-03-01T12:00:00Z", "region": "eu-west-1",
        "resources": ["arn:aws:events:eu-west-1:123456789012:rule/"
                      "agentpack-gateway-HealthCheckFunctionEvery30Minutes-1A2B3C4D5E6F"],
        "detail": {},
    },
}

for name, e in EVENTS.items():
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(e, f, indent=2)
        f.write("\n")
