"""`python -m guardsearch ...`: the same CLI as the `guardsearch` command."""

from guardsearch.cli import main

main()
