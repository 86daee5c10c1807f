"""Machine translation: the language-model protocol, SSBD decoders, prompts, masking."""
