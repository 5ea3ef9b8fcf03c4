"""The scanner's rules, by category: English instructions to the model (`_english`),
exfiltration (`_exfil`), shell payloads and tampering (`_shell`), credentials
(`_secrets`), other languages (`_languages`), and the pieces they share (`_pieces`)."""
