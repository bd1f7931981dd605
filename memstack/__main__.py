from memstack.cli.main import entry

entry()
