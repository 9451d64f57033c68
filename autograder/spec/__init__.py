"""What an assignment declares (tasks, quiz, known mistakes, the reference package) and the loaders that read it."""
