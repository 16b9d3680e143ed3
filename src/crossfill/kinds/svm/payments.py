"""The SVM payer's journal (`svm_payments`), in the lifecycle of every payer's journal
(`store.payment_journal`): signed -> landed | failed | expired, with the slot it landed in or
the program's error."""

from __future__ import annotations

from crossfill.store.payment_journal import PaymentJournal, Stages
from crossfill.store.tables import SvmPayment

SVM_PAYMENTS = PaymentJournal(
    SvmPayment, Stages(paid="landed", refused="failed", dead="expired"), outcome=("slot", "error")
)
