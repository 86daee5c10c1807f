"""Native engines in supervised child processes: a crash there is a message here."""
