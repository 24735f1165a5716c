"""pytest plugin: collects `*.scenario.yaml` files as tests (filled in by the scenario runner)."""
