"""Audio in: microphone/loopback capture and file replay, as 16 kHz mono float32 blocks."""
