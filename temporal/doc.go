// Package temporal runs harness turns as Temporal workflows, so that a
// turn survives the worker that runs it: the model call and each tool call
// are activities, the loop of Agent.Run is the workflow (TurnWorkflow),
// and any worker of the cluster can run any step, because every step
// rebuilds the conversation from the shared transcript store.
//
// What travels in a workflow's history is ids and small figures (the
// conversation id, the turn and round indexes, call ids and names, result
// sizes, usage): never a message or a result. The model's reply and each
// call's result go to a [Journal] until their round is stored, so a step
// retried after its worker died finds its own output there and does not
// call the model or the tool again; the round is then stored in one store
// transaction. Its design is in DESIGN.md beside this file.
//
// A turn's tool steps run on one worker, in a Temporal session, so that
// a tool server that keeps state between calls (an MCP browser or shell
// session: each worker starts its own servers) sees every call of the
// turn; the other steps run on any worker. Workers enable sessions with
// [WorkerOptions]. When the session's worker dies the turn's calls move
// to a new session on another worker, and a turn that finds no
// session-enabled worker runs its tool steps unpinned
// ([TurnInput].Unpinned, PinTimeout).
//
// It is a module of its own so that users of the core library never
// compile the Temporal SDK. Its versions are pinned by what builds with
// Go 1.26.8: go.temporal.io/server v1.32.1 (its in-process temporaltest
// server runs the tests; v1.32.2 needs Go 1.26.10), go.temporal.io/sdk
// v1.50.0 and go.temporal.io/api v1.63.5 (sdk v1.51 needs api v1.64, which
// server v1.32.1 does not compile with).
//
// The command cmd/harness-temporal runs a worker and starts turns; the
// harness command runs it for "harness worker" and "harness run
// --temporal". Its worker's engine has the default stack (package stack)
// as harness run builds it: a durable turn is bounded as an in-process
// one is, and the calls of a round see each other's results (through the
// journal) as under Engine.RunCalls.
package temporal
