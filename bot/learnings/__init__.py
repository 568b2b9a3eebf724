"""Learnings: what a team told the reviewer, remembered past one pull request (pure decisions).

`model` is the learning and its JSON; `body` validates the API's bodies; `capture` turns a comment
or a reaction into a learning (or a refusal, and the answer to post); `apply` picks the `guide`
learnings a review's prompt gets and the findings a `suppress` learning leaves out; `outcomes`
follows a posted finding to `resolved`, `dismissed` or `open`, and `tally` adds outcomes up; `caps`
bounds the inline comments of a review; `walkthrough` reads the model's one line per changed file.
No module here does I/O: the store, GitHub and the clock are the caller's.
"""
