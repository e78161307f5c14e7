"""BlocksWorld, mechanically generated: restack blocks one move at a time to reach a goal.

A second domain for the `program` strategy (docs/program.md): the rules are given in
words, instances are generated from a seed, and every plan is checked by replaying it.
Importing the package registers the app `blocks` (guardsearch.registry).
"""

from guardsearch.apps.blocks.app import APP
from guardsearch.apps.blocks.domain import BlocksSpace, blocks_domain, instance, replay

__all__ = ["APP", "BlocksSpace", "blocks_domain", "instance", "replay"]
