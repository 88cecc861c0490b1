// Package tasks runs MCP Tasks for the gateway (docs/TASKS.md): a task-augmented tools/call
// answers at once with a task, and the client polls for the outcome. API Gateway gives up
// on a request after about 29 s; a task outlives it.
//
// # Two wire forms, one store
//
// The 2025-11-25 form (MCP 2025-11-25 "Tasks": a "task" member in the call's params,
// capabilities.tasks, tasks/get, tasks/result, tasks/list, tasks/cancel) is served by
// [Service.Serve]; the 2026-07-28 form (the io.modelcontextprotocol/tasks extension,
// SEP-2663: declared per request, a flat CreateTaskResult, tasks/get inlining the
// outcome, tasks/update, acknowledging tasks/cancel) by [Service.ServeExtension]. Both
// read and write the same rows (mcp_tasks, shared/db tasks.go) and share one worker.
//
// # Who runs the call
//
// [Service.Create] either runs a built-in at once (its task is complete when created),
// routes the call to an upstream that runs tasks itself (its task id is recorded under a
// gateway task id naming the connection, so tasks/* are routed back statelessly), or
// records a row and hands a [Job] to [Options.Start]: in Lambda an asynchronous invocation
// of the same function, locally a goroutine. The worker, [Service.Run], forwards the call
// through the same path as a synchronous one (forward.Forwarder: metrics, the audit row
// for a result without isError) under [Options.Timeout], and stores the outcome.
//
// # Isolation
//
// Task ids are 128 random bits; every read is scoped to the caller's workspace and
// principal, and another owner's id answers exactly like an unknown one.
//
// The gateway's HTTP edge (package gateway) decides which requests reach this package and
// writes the answers; this package makes the task queries, so the edge makes none.
package tasks
