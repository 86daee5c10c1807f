"""Streaming speech recognition: backends, the LocalAgreement policy, VAD and sentence splits."""
