"""The agent loop and the tool executor: model → tools → model until the model ends its turn.

Owns the loop (:mod:`.loop`: ``run_turn`` → ``TurnResult``; steps that return ``Continue`` or
``Finish``; immutable ``LoopState``; repair of the history on cancel; stop and terminal
reasons), the executor (:mod:`.executor`: validate → PreToolUse hooks → prepare → permission →
call → PostToolUse hooks; refusals as data), whether a call may run (:mod:`.approval`: rules,
hooks' answer, the permission prompt, the user's edits to a proposal), what a turn needs
(:mod:`.env`: ``AgentConfig``, ``TurnEnv``, ``ExecutorEnv``), the turn's hooks
(:mod:`.turn_hooks`) and the system prompt (:mod:`.prompt`). Updates for the user leave
through one channel, the tool context's ``emit``. Layering: may
import ``tools``, ``context``, ``diagnostics``, ``hooks``, ``config``, ``workspace``,
``permissions``, ``model`` and ``protocol``; never ``sessions``, ``mcp`` or a door.
"""
