"""The pipeline wing: recall's stages, from the store to an explained context.

options         RecallOptions: every recall argument, checked once
sources         where recall reads: a store's live index (index.live), or a list of memories
filters         stage 2, scope filters, each with its reason
ranking         stage 3, scored and filtered only as deep as packing reads
budget, pack    stage 4, budgets and poolsplit's packing
reasons, row, explain, context   the result: a reason and a row for every memory
run             recall(), the stages in order
"""
