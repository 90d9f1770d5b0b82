from django.urls import path

from apps.trust import views

urlpatterns = [
    path("runs/<int:run_id>/bundle.zip", views.bundle, name="run-bundle"),
    path("runs/<int:run_id>/propose", views.propose, name="run-propose"),
    path("data/<str:name>", views.dump, name="dump"),
    path("staff/reviews/", views.review_queue, name="review-queue"),
    path("staff/reviews/<int:review_id>", views.review_decision, name="review-decision"),
]
