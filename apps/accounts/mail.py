"""Mail printed to the console as a person reads it (the local default, no mail server)."""

from django.core.mail.backends import console


class ConsoleEmailBackend(console.EmailBackend):
    """Headers and the decoded text of each message. Django's own console backend prints the
    wire form, quoted-printable, which breaks a long link (the address confirmation) over
    two lines with an '=' at the break: copied as printed, it does not work."""

    def write_message(self, message) -> None:
        mail = message.message()
        for header in ("Subject", "From", "To", "Date"):
            if mail[header]:
                self.stream.write(f"{header}: {mail[header]}\n")
        self.stream.write("\n")
        for part in mail.walk():
            if part.get_content_type() == "text/plain" and not part.is_attachment():
                self.stream.write(part.get_content().rstrip("\n") + "\n")
        self.stream.write("-" * 79 + "\n")
