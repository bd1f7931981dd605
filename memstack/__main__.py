from memstack.main import entry

entry()
